// Whether this process may set device rules at all. The kernel wants CAP_SYS_ADMIN (in the
// effective set) to write a v1 cgroup's devices.allow/devices.deny and to attach a v2 BPF
// device program; owning the cgroup directory is not enough. Asked up front, a missing
// capability is one clear line instead of an EPERM on the first rule.
#pragma once

namespace xpart::cgroup {

// True when the calling process has CAP_SYS_ADMIN in its effective set (capget(2)).
bool may_set_device_rules();

}  // namespace xpart::cgroup
