#!/usr/bin/env python3
"""Writes dgx-a100.xml: an hwloc 2 topology shaped like a DGX A100 (2 sockets, one NUMA node
each, 16 cores per socket without SMT to keep it small, 8 A100 GPUs as PCI devices behind
host bridges, 4 per socket at the real DGX A100 bus ids). Run once; the XML is checked in."""
import sys

GPUS = [  # (numa node, bus)
    (0, 0x07), (0, 0x0f), (0, 0x47), (0, 0x4e),
    (1, 0x87), (1, 0x90), (1, 0xb7), (1, 0xbd),
]
CORES_PER_SOCKET = 16
gp = [1]


def nid():
    gp[0] += 1
    return gp[0]



def hwmask(cpus):
    # hwloc writes 32-bit words separated by commas, most significant first.
    v = 0
    for c in cpus:
        v |= 1 << c
    words = []
    while True:
        words.append("0x%08x" % (v & 0xffffffff))
        v >>= 32
        if not v:
            break
    return ",".join(reversed(words))


out = []
allc = list(range(2 * CORES_PER_SOCKET))
out.append('<?xml version="1.0" encoding="UTF-8"?>')
out.append('<!DOCTYPE topology SYSTEM "hwloc2.dtd">')
out.append('<topology version="2.0">')
out.append('  <object type="Machine" os_index="0" cpuset="%s" complete_cpuset="%s" allowed_cpuset="%s" nodeset="0x00000003" complete_nodeset="0x00000003" allowed_nodeset="0x00000003" gp_index="1">' % ((hwmask(allc),) * 3))
out.append('    <info name="DMIProductName" value="DGX A100 (recorded shape, xpart tests)"/>')
for s in range(2):
    cpus = list(range(s * CORES_PER_SOCKET, (s + 1) * CORES_PER_SOCKET))
    ns = "0x%08x" % (1 << s)
    out.append('    <object type="Package" os_index="%d" cpuset="%s" complete_cpuset="%s" nodeset="%s" complete_nodeset="%s" gp_index="%d">' % (s, hwmask(cpus), hwmask(cpus), ns, ns, nid()))
    out.append('      <object type="NUMANode" os_index="%d" cpuset="%s" complete_cpuset="%s" nodeset="%s" complete_nodeset="%s" gp_index="%d" local_memory="540000000000"/>' % (s, hwmask(cpus), hwmask(cpus), ns, ns, nid()))
    for c in cpus:
        m = hwmask([c])
        out.append('      <object type="Core" os_index="%d" cpuset="%s" complete_cpuset="%s" nodeset="%s" complete_nodeset="%s" gp_index="%d">' % (c, m, m, ns, ns, nid()))
        out.append('        <object type="PU" os_index="%d" cpuset="%s" complete_cpuset="%s" nodeset="%s" complete_nodeset="%s" gp_index="%d"/>' % (c, m, m, ns, ns, nid()))
        out.append('      </object>')
    for numa, bus in GPUS:
        if numa != s:
            continue
        out.append('      <object type="Bridge" gp_index="%d" bridge_type="0-1" depth="0" bridge_pci="0000:[%02x-%02x]">' % (nid(), bus, bus))
        out.append('        <object type="PCIDev" gp_index="%d" pci_busid="0000:%02x:00.0" pci_type="0302 [10de:20b0] [10de:134f] a1" pci_link_speed="31.507692">' % (nid(), bus))
        out.append('          <info name="PCIVendor" value="NVIDIA Corporation"/>')
        out.append('          <info name="PCIDevice" value="GA100 [A100 SXM4 40GB]"/>')
        out.append('        </object>')
        out.append('      </object>')
    out.append('    </object>')
out.append('  </object>')
out.append('</topology>')
sys.stdout.write("\n".join(out) + "\n")
