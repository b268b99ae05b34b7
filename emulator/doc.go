// Package emulator is the emulated lab: for every host an SSH server whose
// shell runs the commands labctl uses on real hosts (perftest, ibv_devinfo,
// show_gids, ethtool -S, mlnx_qos, the host agent, pgrep/kill), for every
// switch an SSH server and a gNMI server, and behind them one fabric twin
// (package fabric) that simulates the network.
//
// The emulator prints the real tools' formats through the same packages the
// controller parses them with (perftest, drivers/connectx), and reads the
// device formats it serves (NETCONF QoS model, image manifests) through the
// drivers' public types. Nothing outside emulator/ and cmd/ may import the
// emulator (tests may).
//
// A running lab takes faults (faults.go: fail the next commit, image start
// or command; endpointfault.go: drop or delay an SSH, NETCONF or gNMI
// endpoint for a while), also from another process through the unix
// socket ServeControl listens on (control.go: labctl lab fault).
//
// Imports within labctl: only inventory, perftest, drivers, emulator.
package emulator
