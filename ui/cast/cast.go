// Package cast writes terminal output as an asciicast v2 recording: the
// format asciinema plays, and its converters (agg, svg-term) turn into a
// GIF or an SVG to share a benchmark where people look at results.
package cast

import (
	"encoding/json"
	"fmt"
	"io"
	"sync"
	"time"
)

// Writer records every Write as an output event at its time since the
// writer was made. It is safe for one program's renderer and one closer.
type Writer struct {
	mu    sync.Mutex
	w     io.Writer
	start time.Time
	now   func() time.Time
	err   error
}

// Header is the asciicast v2 header line.
type Header struct {
	Version   int               `json:"version"`
	Width     int               `json:"width"`
	Height    int               `json:"height"`
	Timestamp int64             `json:"timestamp"`
	Title     string            `json:"title,omitempty"`
	Env       map[string]string `json:"env,omitempty"`
}

// New writes the header for a width×height terminal and returns the writer
// of its events.
func New(w io.Writer, width, height int, title string) (*Writer, error) {
	c := &Writer{w: w, now: time.Now}
	c.start = c.now()
	h := Header{Version: 2, Width: width, Height: height, Timestamp: c.start.Unix(), Title: title,
		Env: map[string]string{"TERM": "xterm-256color"}}
	line, err := json.Marshal(h)
	if err != nil {
		return nil, err
	}
	if _, err := fmt.Fprintf(w, "%s\n", line); err != nil {
		return nil, err
	}
	return c, nil
}

// Write records p as one output event.
func (c *Writer) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return 0, c.err
	}
	at := c.now().Sub(c.start).Seconds()
	line, err := json.Marshal([]any{at, "o", string(p)})
	if err == nil {
		_, err = fmt.Fprintf(c.w, "%s\n", line)
	}
	if err != nil {
		c.err = err
		return 0, err
	}
	return len(p), nil
}

// Err is the first write error, if any.
func (c *Writer) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}
