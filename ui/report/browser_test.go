package report

import (
	"context"
	"image"
	"image/color"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dbduel/dbduel/internal/integration"
)

// near says whether c is within tol of want on every channel (a browser
// scales the slide: its lines' pixels are blended at the edges).
func near(c color.Color, want color.RGBA, tol int) bool {
	r, g, b, _ := c.RGBA()
	d := func(x uint32, y uint8) bool { v := int(x>>8) - int(y); return v <= tol && v >= -tol }
	return d(r, want.R) && d(g, want.G) && d(b, want.B)
}

func countNear(img image.Image, want color.RGBA) int {
	n := 0
	bd := img.Bounds()
	for y := bd.Min.Y; y < bd.Max.Y; y++ {
		for x := bd.Min.X; x < bd.Max.X; x++ {
			if near(img.At(x, y), want, 12) {
				n++
			}
		}
	}
	return n
}

// The HTML report as a person sees it: headless Chromium, with every
// host unresolvable, renders the page from the file alone; the screenshot
// shows the slide (each target's colour), the cause box's background and
// the tables, and the DOM holds the verdict and the cause.
func TestHTMLInHeadlessChromium(t *testing.T) {
	integration.Require(t, "chromium")
	bin, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatalf("chromium is not installed (.ci/run installs it): %v", err)
	}
	dir := t.TempDir()
	page := filepath.Join(dir, "report.html")
	if err := os.WriteFile(page, []byte(HTML(threeTargets())), 0o644); err != nil {
		t.Fatal(err)
	}
	shot := filepath.Join(dir, "shot.png")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	common := []string{"--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--host-resolver-rules=MAP * ~NOTFOUND",
		"--user-data-dir=" + filepath.Join(dir, "profile"), "--window-size=1400,2400"}
	out, err := exec.CommandContext(ctx, bin, append(common, "--screenshot="+shot, "file://"+page)...).CombinedOutput()
	if err != nil {
		t.Fatalf("chromium screenshot: %v\n%s", err, out)
	}
	f, err := os.Open(shot)
	if err != nil {
		t.Fatalf("no screenshot: %v\n%s", err, out)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	for i, name := range []string{"native", "bridge", "host"} {
		if n := countNear(img, SeriesColors[i]); n < 100 {
			t.Errorf("%s's colour: %d pixels on the screenshot: the slide did not render", name, n)
		}
	}
	if n := countNear(img, color.RGBA{0xff, 0xf6, 0xe0, 0xff}); n < 2000 {
		t.Errorf("the cause box's background: %d pixels", n)
	}
	dom, err := exec.CommandContext(ctx, bin, append(common, "--dump-dom", "file://"+page)...).Output()
	if err != nil {
		t.Fatalf("chromium dump-dom: %v", err)
	}
	for _, want := range []string{"bridge is slower by 39.7%", "docker-proxy used 0.62 cores", "Configuration differences", "Environment"} {
		if !strings.Contains(string(dom), want) {
			t.Errorf("rendered page lacks %q", want)
		}
	}
}
