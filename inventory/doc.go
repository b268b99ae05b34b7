// Package inventory holds the lab model: switches, hosts and their RNICs,
// links, credential references and services; it loads lab YAML files with
// file:line errors, validates them, and generates named topologies such as
// "leafspine:2x4:4@100".
//
// It must not import any other labctl package: everything else builds on it.
package inventory
