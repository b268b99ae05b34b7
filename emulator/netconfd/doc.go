// Package netconfd is the NETCONF server of an emulated switch, served as
// the SSH subsystem "netconf": base 1.0 (end-of-message) and 1.1 (chunked)
// framing chosen by the hello exchange; running and candidate datastores;
// lock/unlock, get, get-config, edit-config (merge, replace, create,
// delete, remove), validate, commit with confirmed-commit (confirm-timeout,
// persist and persist-id, RFC 6241 8.4) and its rollback, cancel-commit,
// discard-changes, close-session; rpc-error replies for bad input. Tests
// can make the next commit fail.
//
// Imports within labctl: none.
package netconfd
