package scenarios

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/labctl/labctl/archive"
	"github.com/labctl/labctl/collectors"
	"github.com/labctl/labctl/inventory"
	"github.com/labctl/labctl/reports"
)

// gather folds the points' results (archive.Dir.Part) into the run's
// archive, in plan order, as a local run would have written it: the manifest's
// points, labs and telemetry meta, flows.csv, telemetry/*.lp, and the
// points' raw/ and provision/ entries. A point without a result is
// recorded as failed. It can be done again (after a resume): the files
// are rebuilt, and entries already moved stay.
func (st *runState) gather() error {
	ad := archive.Open(st.dir)
	// flows.csv is rebuilt beside the old one and renamed into place
	// once whole (archive.WriteFile).
	if err := archive.WriteFile(ad.Flows(), func(fw io.Writer) error { return st.gatherPoints(ad, fw) }); err != nil {
		return err
	}
	st.done = len(st.m.Points)
	st.save()
	return nil
}

// gatherPoints writes flows.csv to fw and gathers the rest as it goes.
func (st *runState) gatherPoints(ad archive.Dir, fw io.Writer) error {
	if err := reports.WriteFlowsHeader(fw); err != nil {
		return err
	}
	tel := map[string]*os.File{}
	defer func() {
		for _, f := range tel {
			f.Close()
		}
	}()
	if err := os.MkdirAll(ad.Telemetry(), 0o755); err != nil {
		return err
	}
	st.m.Points, st.m.Telemetry, st.failures = nil, nil, nil
	for i := range st.plan.Points {
		pt := &st.plan.Points[i]
		part := ad.Part(i)
		var pm reports.Manifest
		if err := archive.ReadManifest(part, &pm); err != nil {
			if !errors.Is(err, os.ErrNotExist) {
				return fmt.Errorf("point %d: %w", i, err)
			}
			m := pointMeta(pt)
			m.Status, m.Error = pointFailed, "no result: the point did not run to the end"
			if log := newest(ad.SlurmTaskOutputs(i)); log != "" {
				if rel, err := filepath.Rel(ad.Path(), log); err == nil {
					log = rel
				}
				m.Error += " (its task's output: " + log + ")"
			}
			st.add(*m, "traffic:"+pt.Name)
			continue
		}
		st.addLabs(&pm)
		for _, p := range pm.Points {
			st.add(p, "traffic:"+p.Name)
		}
		if pm.Telemetry != nil {
			st.m.Telemetry = mergeTelemetry(st.m.Telemetry, pm.Telemetry)
		}
		if err := appendSkippingHeader(fw, part.Flows()); err != nil {
			return fmt.Errorf("point %d: %w", i, err)
		}
		if err := appendTelemetry(tel, part, ad, pt.Name); err != nil {
			return fmt.Errorf("point %d: %w", i, err)
		}
		for _, sub := range []func(archive.Dir) string{archive.Dir.Raw, archive.Dir.ProvisionRoot} {
			if err := moveEntries(sub(part), sub(ad)); err != nil {
				return fmt.Errorf("point %d: %w", i, err)
			}
		}
	}
	return nil
}

// newest is the most recently written file matching pattern (the last
// try's task output), or "".
func newest(pattern string) string {
	files, _ := filepath.Glob(pattern)
	var best string
	var at time.Time
	for _, f := range files {
		if fi, err := os.Stat(f); err == nil && (best == "" || fi.ModTime().After(at)) {
			best, at = f, fi.ModTime()
		}
	}
	return best
}

// add records a gathered point (a failed one as a failure of stage).
func (st *runState) add(m reports.PointMeta, stage string) {
	st.m.Points = append(st.m.Points, m)
	if m.Status == pointFailed {
		st.failures = append(st.failures, failure{stage, m.Name, errors.New(m.Error)})
	}
}

// addLabs takes the labs a point's manifest recorded.
func (st *runState) addLabs(pm *reports.Manifest) {
	if pm.Lab == nil {
		return
	}
	if st.m.Lab == nil {
		st.m.Lab = pm.Lab
	}
	if st.plan.Lab == "" {
		st.plan.Lab = pm.Lab.Name
	}
	if st.m.Labs == nil {
		st.m.Labs = map[string]*inventory.Lab{}
	}
	for name, l := range pm.Labs {
		if _, ok := st.m.Labs[name]; !ok {
			st.m.Labs[name] = l
		}
	}
}

// appendSkippingHeader copies a flows.csv without its header line; a
// point that failed before its traffic has none.
func appendSkippingHeader(w io.Writer, path string) error {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 256<<10)
	if _, err := br.ReadString('\n'); err != nil {
		return nil // empty, or only a header
	}
	_, err = io.Copy(w, br)
	return err
}

// appendTelemetry appends a point's telemetry/*.lp to the run's, opening
// (truncating) each of the run's files the first time. Every sample is
// tagged with the point (collectors.TagPoint): points of an executor run at
// once on labs of their own, whose devices have the same names, so their
// samples are told apart by the tag, not by time.
func appendTelemetry(open map[string]*os.File, part, run archive.Dir, point string) error {
	files, err := part.TelemetryFiles()
	if err != nil {
		return err
	}
	for _, src := range files {
		name := filepath.Base(src)
		dst, ok := open[name]
		if !ok {
			if dst, err = os.Create(filepath.Join(run.Telemetry(), name)); err != nil {
				return err
			}
			open[name] = dst
		}
		if err := tagLines(dst, src, point); err != nil {
			return fmt.Errorf("telemetry %s: %w", src, err)
		}
	}
	return nil
}

// tagLines copies the line-protocol file src to w with the tag
// collectors.TagPoint=point added to every sample; a torn last line (a
// point killed while writing) is dropped, as the report would.
func tagLines(w io.Writer, src, point string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	bw := bufio.NewWriterSize(w, 256<<10)
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		p, err := collectors.ParseLP(sc.Text())
		if err != nil {
			continue
		}
		if p.Tags == nil {
			p.Tags = map[string]string{}
		}
		p.Tags[collectors.TagPoint] = point
		if err := collectors.EncodeLP(bw, p); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	return bw.Flush()
}

// moveEntries moves what from holds into to, keeping an entry to has.
func moveEntries(from, to string) error {
	ents, err := os.ReadDir(from)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if err := os.MkdirAll(to, 0o755); err != nil {
		return err
	}
	for _, e := range ents {
		dst := filepath.Join(to, e.Name())
		if _, err := os.Stat(dst); err == nil {
			continue
		}
		if err := os.Rename(filepath.Join(from, e.Name()), dst); err != nil {
			return err
		}
	}
	return nil
}
