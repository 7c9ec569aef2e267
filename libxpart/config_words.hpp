// The words every configuration source accepts (xpart.conf, plugstack.conf arguments, srun
// options): one spelling of yes/no and one way to read an enum, both ignoring case, so a
// setting reads alike wherever it is written.
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "libxpart/result.hpp"

namespace xpart {

// yes/no, true/false, 1/0 in any case; Error "expected yes or no" otherwise (an empty value
// too: a bare flag meaning yes is the caller's convention, not a word).
Result<bool> parse_yes_no(std::string_view value);

// "expected a, b or c".
std::string expected_one_of(const std::vector<std::string_view>& words);
bool same_word(std::string_view a, std::string_view b);  // ignoring ASCII case

template <class E>
struct Word {
    std::string_view word;
    E value;
};

// The value of the word `value` names (any case); Error "expected <the words, in order>".
template <class E>
Result<E> parse_word(std::string_view value, std::initializer_list<Word<E>> table) {
    std::vector<std::string_view> words;
    for (const auto& w : table) {
        if (same_word(w.word, value)) return w.value;
        words.push_back(w.word);
    }
    return Error{expected_one_of(words)};
}

}  // namespace xpart
