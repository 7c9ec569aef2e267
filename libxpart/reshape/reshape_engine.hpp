// The steps of every reshape, in one place whatever the vendor: plan (refuse, nothing
// changed), apply, verify by discovery, and put back what was there when apply or verify
// fails. NVIDIA MIG (mig_reshape) and AMD compute partitions (amd_reshape) implement the
// steps; run_reshape_steps orders them and words the failures, the same for both.
#pragma once

#include <string>
#include <utility>

#include "libxpart/result.hpp"

namespace xpart {

// What the engine's failure lines call things (the vendor's words, known once it planned).
struct ReshapeWords {
    std::string gpu;       // "GPU 0", "GPU 0000:05:00.0"
    std::string target;    // "7x1g.10gb", "CPX"
    std::string made;      // the change once applied: "reshaped to 7x1g.10gb", "wrote CPX"
    std::string before;    // what a put back makes again: "3g.40gb+2x1g.10gb", "SPX"
    std::string previous;  // the same in full: "the previous geometry (3g.40gb@0 1g.10gb@4 1g.10gb@5)"
};

// The vendor's plan, decided before anything changes.
struct ReshapeDecision {
    std::string refused;  // the whole refusal line ("GPU 0: ...: not reshaped"); "" when it would be made
    bool already = false;  // the GPU has the target: nothing to apply (verify still runs)
    ReshapeWords words;
};

// How apply or verify ended. A failure with `untouched` (refused()) left the GPU as it was (the
// driver refused the write, or kept its state): `why` is then the whole line, nothing is put back.
struct StepResult {
    bool ok = true;
    bool untouched = false;
    std::string why;
    static StepResult done() { return {}; }
    static StepResult failed(std::string why) { return {false, false, std::move(why)}; }
    static StepResult refused(std::string line) { return {false, true, std::move(line)}; }
};

// One vendor's steps for one GPU and target; it keeps what it learns between them.
class ReshapeVendor {
public:
    virtual ~ReshapeVendor() = default;
    // Reads the GPU and decides. Error: it could not be read (nothing changed).
    virtual Result<ReshapeDecision> plan() = 0;
    virtual StepResult apply() = 0;
    // That discovery (and so slurmd) shows the target; after apply, or with nothing applied
    // when the plan found the GPU there already.
    virtual StepResult verify() = 0;
    // Makes again what the GPU had before apply.
    virtual Status put_back() = 0;
};

struct ReshapeRun {
    bool changed = false;  // applied and verified; false: the GPU had the target already
};

// plan -> refused: the refusal line -> apply (unless already) -> verify; a failed apply or
// verify puts back what was there and the error says what failed and whether the put back
// worked:
//   apply:  "<gpu>: reshape to <target> failed: <why>; <previous> is back"
//           (or "; restoring <previous> failed too: <why>")
//   verify: "<gpu>: <made> but <why>; put back <before>" (or "; putting back <before> failed: <why>")
Result<ReshapeRun> run_reshape_steps(ReshapeVendor& vendor);

}  // namespace xpart
