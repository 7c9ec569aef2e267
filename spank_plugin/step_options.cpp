#include "spank_plugin/step_options.hpp"

#include <cmath>
#include <cstdlib>

#include "libxpart/config_words.hpp"
#include "libxpart/text.hpp"

namespace xpart::spank {
namespace {

Result<StepBind> parse_bind(const std::string& v) {
    return parse_word<StepBind>(v, {{"rank", StepBind::Rank}, {"closest", StepBind::Closest}, {"none", StepBind::None}});
}

// A bare flag (--xpart-mps, or mps= in plugstack.conf) is yes.
template <class T>
Status set_bool(T& out, const std::string& v) {
    auto b = v.empty() ? Result<bool>(true) : parse_yes_no(v);
    if (!b) return b.error();
    out = *b;
    return ok_status();
}

}  // namespace

const char* to_string(StepBind b) {
    switch (b) {
    case StepBind::None: return "none";
    case StepBind::Rank: return "rank";
    case StepBind::Closest: return "closest";
    }
    return "none";
}

Result<StepOptions> parse_site_args(const std::vector<std::string>& args) {
    StepOptions o;
    for (const auto& arg : args) {
        auto fail = [&](const std::string& why) {
            return Error{"plugstack.conf: argument '" + arg + "': " + why};
        };
        const auto eq = arg.find('=');
        if (eq == std::string::npos) return fail("expected key=value");
        const std::string key = arg.substr(0, eq), value = arg.substr(eq + 1);
        Status s = ok_status();
        if (key == "bind") {
            auto b = parse_bind(value);
            if (!b) return fail(b.error().message);
            o.bind = *b;
        } else if (key == "confine") {
            s = set_bool(o.confine, value);
        } else if (key == "mps") {
            s = set_bool(o.mps, value);
        } else if (key == "nic") {
            auto n = binding::parse_nic_bind(value);
            if (!n) return fail(n.error().message);
            o.nic = *n;
        } else if (key == "run_dir") {
            if (value.empty() || value[0] != '/') return fail("expected an absolute path");
            o.mps_job.run_dir = value;
        } else if (key == "mps_control") {
            if (value.empty()) return fail("expected a program");
            o.mps_job.control = value;
        } else if (key == "mps_timeout") {
            char* end = nullptr;
            const double seconds = std::strtod(value.c_str(), &end);
            if (value.empty() || *end || !std::isfinite(seconds) || seconds < mps::kMinMpsTimeoutSeconds ||
                seconds > mps::kMaxMpsTimeoutSeconds)
                return fail("expected seconds between 0.01 and 3600");
            o.mps_job.timeout = mps::mps_timeout_from_seconds(seconds);
        } else if (key == "job_dir_size") {
            auto mib = parse_u64(value);
            if (!mib || *mib < 1 || *mib > 65536) return fail("expected MiB between 1 and 65536");
            o.mps_job.job_dir_mib = static_cast<unsigned>(*mib);
        } else {
            return fail("unknown key (bind, confine, mps, nic, run_dir, mps_control, mps_timeout, job_dir_size)");
        }
        if (!s) return fail(s.error().message);
    }
    return o;
}

Status apply_user_option(StepOptions& o, const std::string& name, const std::string& value) {
    auto fail = [&](const std::string& why) {
        return Error{"--" + name + (value.empty() ? "" : "=" + value) + ": " + why};
    };
    Status s = ok_status();
    if (name == "xpart-bind") {
        auto b = parse_bind(value);
        if (!b) return fail(b.error().message);
        o.bind = *b;
    } else if (name == "xpart-confine") {
        s = set_bool(o.confine, value);
    } else if (name == "xpart-mps") {
        s = set_bool(o.mps, value);
    } else if (name == "xpart-nic") {
        auto n = binding::parse_nic_bind(value);
        if (!n) return fail(n.error().message);
        o.nic = *n;
    } else {
        return fail("not an xpart option");
    }
    if (!s) return fail(s.error().message);
    return ok_status();
}

}  // namespace xpart::spank
