// Package yamlpos is labctl's one strict YAML decode: it parses a file into
// Go structs (unknown keys and type errors are errors), refuses hostile
// documents before decoding them (too large, more than one document, too
// deep, aliases that expand past a budget), and maps field paths
// ("traffic[1].bytes") to the line they are written on, so that every
// loader of a lab, scenario, profile or image manifest reports a problem as
// file:line: field: message. It also answers which YAML keys a struct has,
// for decoding errors and for scenario matrix paths.
//
// Imports within labctl: none.
package yamlpos
