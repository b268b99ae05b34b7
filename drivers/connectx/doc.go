// Package connectx holds the formats of the ConnectX/mlx5 host tools in one
// place: ibv_devinfo, show_gids, ethtool -S, mlnx_qos, cma_roce_tos/mode,
// the OFED sysfs ECN tree and the upstream driver's debugfs cc_params. The
// controller parses real hosts' output with it, and the emulator prints
// through the same formatters, so the two cannot drift apart. Layouts
// follow the real tools byte for byte (tabs, trailing spaces); where the
// public sources are unsure of a detail, the comment says so.
//
// It also holds the RNIC profile: read a host's state (probing which
// driver stack it runs), diff it against the profile, apply the changes
// as the tools' own commands.
//
// Must not import: emulator.
package connectx
