package slurm

import (
	"os"
	"reflect"
	"testing"
)

// TestParseShowJob reads verbatim `scontrol show job -o` output of an
// array (--array=0-3,7, two task slots, task 1 exiting 3) from slurm-wlm
// 22.05 at three moments.
func TestParseShowJob(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		file string
		want []Task
	}{
		{"show_job_pending.txt", []Task{{JobID: "1", Indexes: []int{0, 1, 2, 3, 7}, State: "PENDING"}}},
		{"show_job_running.txt", []Task{
			{JobID: "1", Indexes: []int{2, 3, 7}, State: "PENDING"},
			{JobID: "3", Indexes: []int{1}, State: "RUNNING", Node: "vm"},
			{JobID: "2", Indexes: []int{0}, State: "RUNNING", Node: "vm"}}},
		{"show_job_ended.txt", []Task{
			{JobID: "1", Indexes: []int{7}, State: "RUNNING", Node: "vm"},
			{JobID: "5", Indexes: []int{3}, State: "COMPLETED", Node: "vm"},
			{JobID: "4", Indexes: []int{2}, State: "COMPLETED", Node: "vm"},
			{JobID: "3", Indexes: []int{1}, State: "FAILED", Node: "vm"},
			{JobID: "2", Indexes: []int{0}, State: "COMPLETED", Node: "vm"}}},
	} {
		b, err := os.ReadFile("testdata/" + tc.file)
		if err != nil {
			t.Fatal(err)
		}
		if got := parseShowJob(string(b)); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s:\n got %+v\nwant %+v", tc.file, got, tc.want)
		}
	}
}

func TestIndexLists(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		idx  []int
		list string
	}{
		{[]int{0}, "0"},
		{[]int{0, 1, 2, 3, 7}, "0-3,7"},
		{[]int{1, 3, 5, 6}, "1,3,5-6"},
		{nil, ""},
	} {
		if got := IndexList(tc.idx); got != tc.list {
			t.Errorf("IndexList(%v) = %q, want %q", tc.idx, got, tc.list)
		}
		if got := expandIndexes(tc.list + "%4"); !reflect.DeepEqual(got, tc.idx) {
			t.Errorf("expandIndexes(%q) = %v", tc.list, got)
		}
	}
	if got := expandIndexes("0-6:3"); !reflect.DeepEqual(got, []int{0, 3, 6}) {
		t.Errorf("step: %v", got)
	}
}
