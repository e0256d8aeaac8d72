package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/dbduel/dbduel/engine"
	"github.com/dbduel/dbduel/engine/result"
	"github.com/dbduel/dbduel/ui/cast"
	"github.com/dbduel/dbduel/ui/tui"
)

// parseSize reads --size WxH (columns × lines, 80x24 at least).
func parseSize(s string) (w, h int, err error) {
	ws, hs, ok := strings.Cut(strings.ToLower(strings.TrimSpace(s)), "x")
	w, errW := strconv.Atoi(ws)
	h, errH := strconv.Atoi(hs)
	if !ok || errW != nil || errH != nil || w < 80 || h < 24 || w > 500 || h > 200 {
		return 0, 0, usageErr("invalid --size %q: want COLUMNSxLINES, from 80x24 to 500x200 (e.g. 100x30)", s)
	}
	return w, h, nil
}

// replayToCast plays r through the terminal UI into an asciicast v2 file
// at path (a w×h terminal, times at speed), ending on the finished screen.
// The file is written beside path and renamed over it: never through a
// link someone else put there, never half-written.
func replayToCast(ctx context.Context, r *result.Result, speed float64, path string, w, h int) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".dbduel-*.cast.tmp")
	if err != nil {
		return fmt.Errorf("--cast: %w", err)
	}
	defer os.Remove(tmp.Name()) // after the rename: nothing left
	title := "dbduel replay: " + r.Workload.Name + ", measured " + r.StartedAt.Local().Format("2006-01-02 15:04")
	cw, err := cast.New(tmp, w, h, title)
	if err == nil {
		err = playInto(ctx, r, speed, cw, w, h)
	}
	if err == nil {
		err = cw.Err()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp.Name(), 0o644)
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		return fmt.Errorf("--cast %s: %w", path, err)
	}
	return nil
}

// playInto runs the replay's program with out as its terminal: no input,
// the size given, and a quit a moment after the finished screen is drawn.
func playInto(ctx context.Context, r *result.Result, speed float64, out *cast.Writer, w, h int) error {
	feedCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	gone := make(chan struct{})
	defer close(gone)
	events := make(chan engine.Event)
	finished := make(chan struct{})
	tee := make(chan engine.Event)
	go replayEvents(feedCtx, r, speed, events, gone)
	go func() { // pass the events on, noting the last one (tee stays open: the model waits on it until the quit)
		for e := range events {
			tee <- e
			if e.Kind == engine.EventFinished {
				close(finished)
				return
			}
		}
	}()
	model := tui.New(replayInfo(r), tee, cancel, nil, true)
	prog := tea.NewProgram(model, tea.WithContext(ctx), tea.WithOutput(out), tea.WithInput(nil),
		tea.WithFPS(10), tea.WithoutSignalHandler())
	go func() {
		prog.Send(tea.WindowSizeMsg{Width: w, Height: h})
		select {
		case <-finished:
			time.Sleep(1500 * time.Millisecond) // the finished screen, drawn and held
		case <-ctx.Done():
		}
		prog.Quit()
	}()
	if _, err := prog.Run(); err != nil && !errors.Is(err, tea.ErrProgramKilled) && !errors.Is(err, context.Canceled) {
		return err
	}
	return nil
}
