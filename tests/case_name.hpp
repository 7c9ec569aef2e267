// GoogleTest names for table-driven cases whose `name` field is a short sentence: every
// character that is not a letter or digit becomes '_' ("a port down" -> "a_port_down").
#pragma once

#include <gtest/gtest.h>

#include <cctype>
#include <string>

namespace xpart::testing {

struct SentenceCaseName {
    template <class Param>
    std::string operator()(const ::testing::TestParamInfo<Param>& info) const {
        std::string n = info.param.name;
        for (char& c : n)
            if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
        return n;
    }
};

}  // namespace xpart::testing
