package perftest

import "strings"

// failurePrefixes start the lines perftest prints when a run went wrong,
// taken from the messages of perftest's sources (perftest_resources.c,
// perftest_communication.c, perftest_parameters.c) as quoted in the lab's
// hardware-surfaces reference, table "Errors and exit codes":
//
//	" Completion with error at client" / "... at server"
//	" Failed status 12: wr_id 0 syndrom 0x81", " Failed to complete run_iter_bw function successfully"
//	"Couldn't connect to ...", "Couldn't listen to port ...", "Couldn't allocate MR", "Couldn't create CQ"
//	" Unable to init the socket connection", " Unable to Connect the HCA's through the link"
//	" Did not get Message for 120 Seconds, exiting.." (the report is still printed)
//	"Error: BW result is below bw limit"
//	" Found Incompatibility issue with GID types."
//	"Current implementation is not compatible with versions older than 5.70"
//
// UNCERTAIN: the reference lists these messages, not every one perftest
// has; the prefixes ("Couldn't", "Failed", "Unable to", "Error") are chosen
// to also catch the unlisted siblings of the same families.
var failurePrefixes = []string{
	"Completion with error",
	"Failed status",
	"Failed to ",
	"Couldn't ",
	"Unable to ",
	"Did not get Message",
	"Error:",
	"Found Incompatibility",
	"Current implementation is not compatible",
}

// failureLine returns the first line of out that reports a failure, or nil.
// Header lines ("Label : value") and result rows never start with these.
func failureLine(out string) *ToolError {
	for n, line := range strings.Split(out, "\n") {
		t := strings.TrimSpace(line)
		for _, p := range failurePrefixes {
			if !strings.HasPrefix(t, p) {
				continue
			}
			kind := Unknown
			if e := ClassifyError(t); e != nil {
				kind = e.Kind
			}
			return &ToolError{Kind: kind, Text: t, Line: n + 1}
		}
	}
	return nil
}
