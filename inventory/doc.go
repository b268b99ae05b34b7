// Package inventory holds the lab model: switches, hosts and their RNICs,
// links, credential references and services; it loads lab YAML files with
// file:line errors, validates them, and generates named topologies such as
// "leafspine:2x4:4@100".
//
// Everything else builds on it.
//
// Imports within labctl: only internal/yamlpos, internal/suggest.
package inventory
