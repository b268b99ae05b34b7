package perftest

import (
	"bufio"
	"bytes"
	"embed"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"
)

// CDF is a flow-size distribution: sizes in bytes with their cumulative
// probability (0..1), ascending. Between points the size is interpolated
// linearly, as the papers' traffic generators do.
type CDF struct {
	Name  string
	Sizes []float64
	Probs []float64
}

//go:embed workloads/*.cdf
var shipped embed.FS

// ShippedCDFs lists the distributions that ship with labctl.
func ShippedCDFs() []string {
	ents, _ := shipped.ReadDir("workloads")
	var out []string
	for _, e := range ents {
		out = append(out, strings.TrimSuffix(e.Name(), ".cdf"))
	}
	return out
}

// CDFByName returns a shipped distribution ("websearch") or reads a file.
func CDFByName(nameOrPath string) (*CDF, error) {
	if b, err := shipped.ReadFile("workloads/" + nameOrPath + ".cdf"); err == nil {
		c, err := ParseCDF(bytes.NewReader(b))
		if err != nil {
			return nil, fmt.Errorf("shipped CDF %s: %w", nameOrPath, err)
		}
		c.Name = nameOrPath
		return c, nil
	}
	if _, err := os.Stat(nameOrPath); err != nil {
		return nil, fmt.Errorf("CDF %q: no such file and no shipped distribution of that name (shipped: %s)", nameOrPath, strings.Join(ShippedCDFs(), ", "))
	}
	return LoadCDF(nameOrPath)
}

// LoadCDF reads a CDF file in either of the two formats the RDMA code bases
// ship: "<size> <cumulative percent>" starting at "0 0" and ending at 100,
// or "<size> <cumulative fraction>" (ns-2 style, a size may repeat to make
// a step). The format is told from the last point (100 or 1).
func LoadCDF(path string) (*CDF, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	c, err := ParseCDF(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	c.Name = strings.TrimSuffix(path[strings.LastIndexByte(path, '/')+1:], ".cdf")
	return c, nil
}

// ParseCDF reads a CDF (see LoadCDF).
func ParseCDF(r io.Reader) (*CDF, error) {
	c := &CDF{}
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		f := strings.Fields(sc.Text())
		if len(f) == 0 || strings.HasPrefix(f[0], "#") {
			continue
		}
		if len(f) != 2 {
			return nil, fmt.Errorf("line %d: want \"size cumulative\", got %q", n, sc.Text())
		}
		s, e1 := strconv.ParseFloat(f[0], 64)
		p, e2 := strconv.ParseFloat(f[1], 64)
		if e1 != nil || e2 != nil || s < 0 || p < 0 {
			return nil, fmt.Errorf("line %d: bad numbers %q", n, sc.Text())
		}
		if k := len(c.Sizes); k > 0 && (s < c.Sizes[k-1] || p < c.Probs[k-1]) {
			return nil, fmt.Errorf("line %d: sizes and probabilities must not decrease", n)
		}
		c.Sizes, c.Probs = append(c.Sizes, s), append(c.Probs, p)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(c.Sizes) < 2 {
		return nil, fmt.Errorf("a CDF needs at least two points")
	}
	last := c.Probs[len(c.Probs)-1]
	switch {
	case math.Abs(last-100) < 1e-9:
		for i := range c.Probs {
			c.Probs[i] /= 100
		}
	case math.Abs(last-1) < 1e-9:
	default:
		return nil, fmt.Errorf("the last point must be at 100 (percent) or 1 (fraction), got %v", last)
	}
	return c, nil
}

// Sample maps a uniform u in [0,1) to a size by linear interpolation
// between the surrounding points, truncated to whole bytes (0 becomes 1).
func (c *CDF) Sample(u float64) int64 {
	i := sort.SearchFloat64s(c.Probs, u)
	if i == 0 {
		return max(int64(c.Sizes[0]), 1)
	}
	if i >= len(c.Probs) {
		return max(int64(c.Sizes[len(c.Sizes)-1]), 1)
	}
	p0, p1, s0, s1 := c.Probs[i-1], c.Probs[i], c.Sizes[i-1], c.Sizes[i]
	s := s1
	if p1 > p0 {
		s = s0 + (u-p0)/(p1-p0)*(s1-s0)
	}
	return max(int64(s), 1)
}

// At is the CDF's value at size x (the inverse of Sample); at a step it is
// the top of the step.
func (c *CDF) At(x float64) float64 {
	j := sort.Search(len(c.Sizes), func(i int) bool { return c.Sizes[i] > x }) - 1
	switch {
	case j < 0:
		return 0
	case j == len(c.Sizes)-1:
		return c.Probs[j]
	}
	s0, s1, p0, p1 := c.Sizes[j], c.Sizes[j+1], c.Probs[j], c.Probs[j+1]
	return p0 + (x-s0)/(s1-s0)*(p1-p0)
}

// Mean is the mean size under linear interpolation (each segment's
// midpoint times its probability mass).
func (c *CDF) Mean() float64 {
	var m float64
	for i := 1; i < len(c.Sizes); i++ {
		m += (c.Sizes[i] + c.Sizes[i-1]) / 2 * (c.Probs[i] - c.Probs[i-1])
	}
	return m
}
