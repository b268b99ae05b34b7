// Package e2e holds end-to-end tests: shipped scenarios run on an emulated
// lab through the real SSH, SFTP and gNMI endpoints, with telemetry written
// to a real influxd, and the reports checked against physics.
//
// It has no non-test code; only its tests import the emulator.
//
// Imports within labctl: none.
package e2e
