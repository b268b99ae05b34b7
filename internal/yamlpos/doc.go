// Package yamlpos decodes YAML into Go structs strictly (unknown keys and
// type errors are errors) and keeps positions, so that every loader of a
// lab, scenario or profile file reports a problem as file:line: field:
// message. It also answers which YAML keys a struct has, for decoding
// errors and for scenario matrix paths.
//
// Imports within labctl: none.
package yamlpos
