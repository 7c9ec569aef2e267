#include "cgroup/v1_device_controller.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <tuple>

#include "libxpart/unique_fd.hpp"
#include "libxpart/root_fs.hpp"
#include "libxpart/text.hpp"

namespace xpart::cgroup {

namespace {

using RuleKey = std::tuple<char, unsigned, unsigned>;
RuleKey key_of(const DeviceRule& r) {
    return {static_cast<char>(r.type), r.major.value_or(~0u), r.minor.value_or(~0u)};
}
std::map<RuleKey, DeviceRule> by_key(const std::vector<DeviceRule>& rules) {
    std::map<RuleKey, DeviceRule> out;
    for (const auto& r : rules) {
        auto [it, fresh] = out.emplace(key_of(r), r);
        if (!fresh) it->second.access |= r.access;
    }
    return out;
}

bool covers(const DeviceRule& outer, const DeviceRule& inner) {
    return (outer.type == DeviceType::All || outer.type == inner.type) &&
           (!outer.major || outer.major == inner.major) && (!outer.minor || outer.minor == inner.minor);
}

bool is_allow_all(const DeviceRule& r) { return r.type == DeviceType::All; }

// One write: devices.allow or devices.deny, one rule.
struct V1Write {
    bool allow;
    std::string text;
};

class V1Writer {
public:
    explicit V1Writer(const std::string& dir) : dir_(dir) {}
    Status write(const V1Write& w) {
        UniqueFd& fd = w.allow ? allow_ : deny_;
        const std::string file = dir_ + (w.allow ? "/devices.allow" : "/devices.deny");
        if (!fd.valid()) {
            fd = UniqueFd(::open(file.c_str(), O_WRONLY | O_CLOEXEC));
            if (!fd.valid()) return Error{"cannot open " + file + ": " + std::strerror(errno)};
        }
        if (::write(fd.get(), w.text.data(), w.text.size()) != static_cast<ssize_t>(w.text.size()))
            return Error{"cannot write '" + w.text + "' to " + file + ": " + std::strerror(errno)};
        return ok_status();
    }

private:
    std::string dir_;
    UniqueFd allow_, deny_;
};

bool make_dirs(const std::string& dir) {
    for (std::size_t pos = 1; pos != std::string::npos; pos = dir.find('/', pos + 1)) {
        const std::string prefix = dir.substr(0, pos);
        if (::mkdir(prefix.c_str(), 0755) != 0 && errno != EEXIST) return false;
    }
    return ::mkdir(dir.c_str(), 0755) == 0 || errno == EEXIST;
}

}  // namespace

V1DeviceState v1_state_for(const DeviceRuleSet& set) {
    V1DeviceState state;
    if (set.policy == DevicePolicy::DenyAll) {
        for (const auto& r : set.allow)
            if (is_allow_all(r)) return state;  // "a": allow everything
        state.default_allow = false;
        for (const auto& [k, r] : by_key(set.allow)) state.exceptions.push_back(r);
        return state;
    }
    for (auto [k, m] : by_key(set.managed)) {
        for (const auto& a : set.allow)
            if (covers(a, m)) m.access &= ~a.access;
        if (m.access != 0) state.exceptions.push_back(m);
    }
    return state;
}

Result<V1DeviceState> parse_devices_list(const std::string& text, const std::string& file) {
    V1DeviceState state;
    state.default_allow = false;
    unsigned lineno = 0;
    for (const auto& line : split(text, '\n')) {
        ++lineno;
        if (trim(line).empty()) continue;
        auto rule = parse_device_rule(line);
        if (!rule) return file_error(file, lineno, rule.error().message);
        if (is_allow_all(*rule)) {
            state.default_allow = true;
            state.exceptions.clear();
            return state;
        }
        state.exceptions.push_back(*rule);
    }
    return state;
}

V1DeviceController::V1DeviceController(std::string cgroup_dir, std::string state_dir)
    : dir_(std::move(cgroup_dir)), state_dir_(std::move(state_dir)) {}

std::string V1DeviceController::state_file() const {
    std::string name;
    for (char c : dir_) name += c == '/' ? '%' : c;
    return state_dir_ + "/" + name + ".rules";
}

Result<V1DeviceState> V1DeviceController::read_state() const {
    RootFs fs;
    auto list = fs.read(dir_ + "/devices.list");
    if (!list) return Error{"cgroup " + dir_ + " (devices v1): " + list.error().message};
    auto state = parse_devices_list(*list, dir_ + "/devices.list");
    if (!state || !state->default_allow) return state;
    // Allow-default: the denials are ours to remember.
    auto saved = fs.read(state_file());
    if (!saved) return state;
    auto set = parse_rule_set(*saved, state_file());
    if (!set) return set.error();
    return v1_state_for(*set);
}

Status V1DeviceController::apply(const DeviceRuleSet& set) const {
    if (set.policy == DevicePolicy::DenyManaged)
        for (const auto& m : set.managed)
            for (const auto& a : set.allow)
                if (covers(m, a) && key_of(m) != key_of(a))
                    return Error{"cgroup v1 cannot allow '" + format_device_rule(a) +
                                 "' inside the denied wildcard '" + format_device_rule(m) + "'"};
    auto current = read_state();
    if (!current) return current.error();
    const V1DeviceState target = v1_state_for(set);
    if (current->default_allow != target.default_allow && target.default_allow)
        return Error{"cgroup " + dir_ + " (devices v1) denies by default; going to allow-by-default "
                     "would briefly allow every device: clear it first"};

    std::vector<V1Write> plan;
    std::vector<V1Write> undo_mode;  // how to undo the mode switch, if any
    std::map<RuleKey, DeviceRule> old_ex = by_key(current->exceptions);
    if (current->default_allow && !target.default_allow) {
        plan.push_back({false, "a"});
        undo_mode.push_back({true, "a"});
        for (const auto& [k, r] : old_ex) undo_mode.push_back({false, format_device_rule(r)});
        old_ex.clear();
    }
    const std::map<RuleKey, DeviceRule> new_ex = by_key(target.exceptions);
    // Bits to widen and to narrow, per device: in deny mode exceptions allow, so gaining an
    // exception widens; in allow mode exceptions deny, so gaining one narrows.
    std::vector<V1Write> gained, lost;
    for (const auto& [k, r] : new_ex) {
        auto it = old_ex.find(k);
        DeviceRule add = r;
        add.access = r.access & ~(it == old_ex.end() ? 0u : it->second.access);
        if (add.access) gained.push_back({!target.default_allow, format_device_rule(add)});
    }
    for (const auto& [k, r] : old_ex) {
        auto it = new_ex.find(k);
        DeviceRule drop = r;
        drop.access = r.access & ~(it == new_ex.end() ? 0u : it->second.access);
        if (drop.access) lost.push_back({target.default_allow, format_device_rule(drop)});
    }
    // Deny mode: allow the new bits, then deny the dropped ones (the union for an instant).
    // Allow mode: deny the new bits, then lift the dropped denials (the intersection).
    // Either way the process never holds what neither set allows.
    plan.insert(plan.end(), gained.begin(), gained.end());
    plan.insert(plan.end(), lost.begin(), lost.end());

    V1Writer writer(dir_);
    for (std::size_t i = 0; i < plan.size(); ++i) {
        Status st = writer.write(plan[i]);
        if (st) continue;
        // Undo in reverse; the mode switch (always first) has its own undo.
        std::string undo_error;
        for (std::size_t j = i; j-- > 0;) {
            if (j == 0 && !undo_mode.empty()) {
                for (const auto& w : undo_mode)
                    if (Status u = writer.write(w); !u && undo_error.empty()) undo_error = u.error().message;
                continue;
            }
            Status u = writer.write({!plan[j].allow, plan[j].text});
            if (!u && undo_error.empty()) undo_error = u.error().message;
        }
        return Error{st.error().message + (undo_error.empty()
                                               ? "; previous rules restored"
                                               : "; restoring the previous rules failed too: " + undo_error)};
    }
    if (set.policy == DevicePolicy::DenyManaged) {
        if (!make_dirs(state_dir_))
            return Error{"rules applied, but cannot create " + state_dir_ + ": " + std::strerror(errno)};
        const std::string tmp = state_file() + ".tmp";
        const std::string text = format_rule_set(set);
        FILE* f = std::fopen(tmp.c_str(), "we");
        bool ok = f && std::fwrite(text.data(), 1, text.size(), f) == text.size();
        if (f && std::fclose(f) != 0) ok = false;
        if (!ok || std::rename(tmp.c_str(), state_file().c_str()) != 0)
            return Error{"rules applied, but cannot record them in " + state_file() + ": " + std::strerror(errno)};
    } else {
        forget();
    }
    return ok_status();
}

Result<std::optional<DeviceRuleSet>> V1DeviceController::current_rules() const {
    RootFs fs;
    auto list = fs.read(dir_ + "/devices.list");
    if (!list) return Error{"cgroup " + dir_ + " (devices v1): " + list.error().message};
    auto state = parse_devices_list(*list, dir_ + "/devices.list");
    if (!state) return state.error();
    if (!state->default_allow) {
        DeviceRuleSet set;
        set.allow = state->exceptions;
        return std::optional<DeviceRuleSet>(std::move(set));
    }
    auto saved = fs.read(state_file());
    if (!saved) return std::optional<DeviceRuleSet>{};
    auto set = parse_rule_set(*saved, state_file());
    if (!set) return set.error();
    return std::optional<DeviceRuleSet>(std::move(*set));
}

Status V1DeviceController::clear() const {
    V1Writer writer(dir_);
    Status st = writer.write({true, "a"});
    if (!st) return st;
    forget();
    return ok_status();
}

void V1DeviceController::forget() const { ::unlink(state_file().c_str()); }

Status narrow_in_place(const std::string& dir, const DeviceRuleSet& set) {
    if (set.policy != DevicePolicy::DenyManaged)
        return Error{"cgroup " + dir + ": only a DenyManaged set narrows a cgroup in place"};
    const auto allowed = by_key(set.allow);
    V1Writer writer(dir);
    // Denials only: an allow line would lift the owner's own denial (Slurm's per-task choice).
    for (const auto& m : set.managed) {
        if (allowed.count(key_of(m))) continue;
        for (const auto& [k, a] : allowed)
            if (covers(m, a))
                return Error{"cgroup v1 cannot allow '" + format_device_rule(a) +
                             "' inside the denied wildcard '" + format_device_rule(m) + "'"};
        if (Status s = writer.write({false, format_device_rule(m)}); !s) return s;
    }
    return ok_status();
}

}  // namespace xpart::cgroup
