#include "libxpart/reshape/reshape_engine.hpp"

namespace xpart {

Result<ReshapeRun> run_reshape_steps(ReshapeVendor& vendor) {
    auto plan = vendor.plan();
    if (!plan) return plan.error();
    if (!plan->refused.empty()) return Error{plan->refused};
    const ReshapeWords& w = plan->words;
    if (!plan->already) {
        const StepResult applied = vendor.apply();
        if (applied.untouched) return Error{applied.why};
        if (!applied.ok) {
            // Put back what was there: the node's last good state.
            const Status back = vendor.put_back();
            return Error{w.gpu + ": reshape to " + w.target + " failed: " + applied.why +
                         (back ? "; " + w.previous + " is back"
                               : "; restoring " + w.previous + " failed too: " + back.error().message)};
        }
    }
    const StepResult verified = vendor.verify();
    if (verified.untouched) return Error{verified.why};
    if (!verified.ok) {
        const Status back = vendor.put_back();
        return Error{w.gpu + ": " + w.made + " but " + verified.why +
                     (back ? "; put back " + w.before
                           : "; putting back " + w.before + " failed: " + back.error().message)};
    }
    return ReshapeRun{!plan->already};
}

}  // namespace xpart
