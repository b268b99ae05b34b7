// Package papers is the reproduction report: it holds the claims file
// (claims.yaml, embedded: per paper of the seeds digest §3, the scenarios
// that rerun its experiments, each with a reduced "quick" cut for CI, the
// tables of the twin's figures, and the claims, each with the paper's
// figure and a comparison the twin's summary can decide), evaluates the
// claims on the runs' summaries, and writes docs/papers.md.
//
// It neither runs scenarios nor reads archives: cmd/labctl (labctl papers)
// runs each scenario and hands over its reports.Summary, the one the
// run's report shows.
//
// Imports within labctl: only reports.
package papers
