package check

import "testing"

func TestDropReasonFindingsAreInTheCatalog(t *testing.T) {
	for reason, ids := range DropReasonFindings {
		if len(ids) == 0 || DropReasonNoise[reason] {
			t.Errorf("%s: names no finding, or is noise too", reason)
		}
		for _, id := range ids {
			if _, ok := Lookup(id); !ok {
				t.Errorf("%s: %s is not in the catalog", reason, id)
			}
		}
	}
}
