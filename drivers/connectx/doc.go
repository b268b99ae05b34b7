// Package connectx holds the formats of the ConnectX/mlx5 host tools in one
// place: ibv_devinfo, show_gids, ethtool -S and mlnx_qos. The controller
// parses real hosts' output with it, and the emulator prints through the
// same formatters, so the two cannot drift apart. Layouts follow the real
// tools byte for byte (tabs, trailing spaces); where the public sources are
// unsure of a detail, the comment says so.
//
// It must not import the emulator.
package connectx
