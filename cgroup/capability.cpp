#include "cgroup/capability.hpp"

#include <linux/capability.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace xpart::cgroup {

bool may_set_device_rules() {
    __user_cap_header_struct header{};
    header.version = _LINUX_CAPABILITY_VERSION_3;
    header.pid = 0;  // this thread
    __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = {};
    if (syscall(SYS_capget, &header, data) != 0) return false;
    return (data[CAP_TO_INDEX(CAP_SYS_ADMIN)].effective & CAP_TO_MASK(CAP_SYS_ADMIN)) != 0;
}

}  // namespace xpart::cgroup
