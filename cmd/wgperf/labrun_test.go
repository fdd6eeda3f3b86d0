//go:build !router

package main

import (
	"testing"

	"github.com/spf13/cobra"
)

// lab run names its lab after the lab's --name, the old --lab-name, or "run".
func TestScenarioLabName(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{nil, "run"},
		{[]string{"--name", "x1"}, "x1"},
		{[]string{"--lab-name", "old"}, "old"},
		{[]string{"--name", "x1", "--lab-name", "old"}, "x1"},
	} {
		var got string
		lab := labCmd()
		run, _, err := lab.Find([]string{"run"})
		if err != nil {
			t.Fatal(err)
		}
		run.RunE = func(cmd *cobra.Command, _ []string) error {
			legacy, _ := cmd.Flags().GetString("lab-name")
			got = scenarioLabName(cmd, legacy)
			return nil
		}
		lab.SetArgs(append([]string{"run"}, tt.args...))
		if err := lab.Execute(); err != nil {
			t.Fatalf("%v: %v", tt.args, err)
		}
		if got != tt.want {
			t.Errorf("%v: lab %q, want %q", tt.args, got, tt.want)
		}
	}
}
