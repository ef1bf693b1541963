# The devices of accmap's qemu-system-aarch64: the virt machine with what
# it selects (GIC, PL011, PL031, virtio-mmio, PCIe host, SMMUv3, ...) and
# accmap's GPU.  configure's --without-default-devices leaves out the
# rest.
CONFIG_ARM_VIRT=y
CONFIG_ACCMAP_MALI=y
# qemu 7.2's Arm target code calls the M-profile interrupt controller and
# Arm semihosting whatever the machine: without them the binary does not
# link.  ARM_V7M brings both.
CONFIG_ARM_V7M=y
