package archive

import (
	"fmt"
	"path/filepath"
)

// Provisioning is provision/ (or provision/<variant>/ for a variant of a
// matrix): the record of making the lab match a variant's image and
// profiles.
type Provisioning struct{ path string }

// Provision is the provisioning record of a variant ("" for a scenario
// without variants).
func (d Dir) Provision(variant string) Provisioning {
	p := d.join("provision")
	if variant != "" {
		p = filepath.Join(p, SafeName(variant))
	}
	return Provisioning{p}
}

// ProvisionRoot is provision/ itself, whatever the variants.
func (d Dir) ProvisionRoot() string { return d.join("provision") }

// Path is the record's directory.
func (p Provisioning) Path() string { return p.path }

// Report is report.json, the whole provisioning report.
func (p Provisioning) Report() string { return filepath.Join(p.path, "report.json") }

// Step is <part>-<step>.json: part is image, switch or rnic; step is plan,
// apply or readback.
func (p Provisioning) Step(part, step string) string {
	return filepath.Join(p.path, part+"-"+step+".json")
}

// DerivedProfile is <kind>-profile.yaml, a profile a matrix derived (kind
// switch or rnic), applied from this copy so the archive says exactly what
// the lab was given.
func (p Provisioning) DerivedProfile(kind string) string {
	return filepath.Join(p.path, kind+"-profile.yaml")
}

// Slurm is slurm/, the Slurm executor's files: its array scripts, the
// tasks' output and the submissions it made.
func (d Dir) Slurm() string { return d.join("slurm") }

// SlurmScript is the batch script of the try-th array submission.
func (d Dir) SlurmScript(try int) string {
	return filepath.Join(d.Slurm(), fmt.Sprintf("array-%d.sh", try))
}

// SlurmOutput is the sbatch --output pattern: one file per array task.
func (d Dir) SlurmOutput() string { return filepath.Join(d.Slurm(), "%A_%a.out") }

// SlurmTaskOutputs is the glob pattern of point i's tasks' output files
// (one per try) as SlurmOutput names them.
func (d Dir) SlurmTaskOutputs(i int) string {
	return filepath.Join(d.Slurm(), fmt.Sprintf("*_%d.out", i))
}

// SlurmJobs is jobs.jsonl, one line per array submitted.
func (d Dir) SlurmJobs() string { return filepath.Join(d.Slurm(), "jobs.jsonl") }
