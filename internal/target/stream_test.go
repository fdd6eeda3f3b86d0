package target

import (
	"context"
	"io"
	"testing"
	"time"
)

// TestStreamEndsWhenCancelledWhateverItsPipes: a stream whose output goes
// into a pipe nobody reads any more, or whose input comes from a pipe that
// never ends, ends once its context is done (SIGTERM), where os/exec alone
// would wait for the copy into or out of that pipe for ever.
func TestStreamEndsWhenCancelledWhateverItsPipes(t *testing.T) {
	for _, tc := range []struct {
		name string
		run  func(ctx context.Context) error
	}{
		{"output into a pipe nobody reads", func(ctx context.Context) error {
			_, w := io.Pipe()
			return Local().Stream(ctx, nil, w, nil, "yes")
		}},
		{"errors into a pipe nobody reads", func(ctx context.Context) error {
			_, w := io.Pipe()
			return Local().Stream(ctx, nil, io.Discard, w, "sh", "-c", "yes >&2")
		}},
		{"input from a pipe that never ends", func(ctx context.Context) error {
			r, _ := io.Pipe()
			return Local().Stream(ctx, r, io.Discard, nil, "cat")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(200*time.Millisecond, cancel)
			done := make(chan error, 1)
			go func() { done <- tc.run(ctx) }()
			select {
			case err := <-done:
				if err == nil {
					t.Error("a cancelled stream reported success")
				}
			case <-time.After(30 * time.Second): // a liveness bound: it used to never return
				t.Fatal("the stream did not end 30 s after its context")
			}
		})
	}
}
