package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// tutorialBlock is one fenced code block of docs/TUTORIAL.md whose info
// string carries a marker: "file=PATH" (written into the module), "run"
// (a bash script run in the module), "up" (the cluster command),
// "background" (a command left running) or "output" (how the stdout of
// the previous run block must end: what its last command prints).
type tutorialBlock struct {
	lang, marker, arg string
	body              string
	line              int
}

var fence = regexp.MustCompile("^```(\\w*)(?: (file=(\\S+)|run|up|background|output))?\\s*$")

// parseTutorial returns the marked blocks of md in order; unmarked blocks
// are not returned, and a fence the test does not understand is an error.
func parseTutorial(md string) ([]tutorialBlock, error) {
	var blocks []tutorialBlock
	lines := strings.Split(md, "\n")
	for i := 0; i < len(lines); i++ {
		if !strings.HasPrefix(lines[i], "```") {
			continue
		}
		m := fence.FindStringSubmatch(lines[i])
		if m == nil {
			return nil, fmt.Errorf("line %d: fence %q has an unknown marker", i+1, lines[i])
		}
		b := tutorialBlock{lang: m[1], line: i + 1}
		switch {
		case m[3] != "":
			b.marker, b.arg = "file", m[3]
		case m[2] != "":
			b.marker = m[2]
		}
		var body []string
		for i++; i < len(lines) && lines[i] != "```"; i++ {
			body = append(body, lines[i])
		}
		if i == len(lines) {
			return nil, fmt.Errorf("line %d: unclosed block", b.line)
		}
		b.body = strings.Join(body, "\n") + "\n"
		if b.marker != "" {
			blocks = append(blocks, b)
		}
	}
	return blocks, nil
}

// TestTutorial runs docs/TUTORIAL.md: its files are written into a fresh
// module directory, its "up" block starts `setpoint up` there (with
// --listen on a free port added), its shell blocks run in order with
// bash -e (KUBECONFIG is the one the tutorial exports, SETPOINT this
// repository, GOFLAGS=-mod=mod, GOPROXY as the environment has it), its
// "background" block runs until the end, and the stdout of the run block
// before each output block must end with the output block's lines (runs
// of blanks compared as one). The repository's go.sum is copied into the module first, standing
// in for the checksum database so that the test needs no network when the
// module cache is warm.
func TestTutorial(t *testing.T) {
	// Not parallel: the tutorial compiles a module and runs its `go test`,
	// which starts a server of its own; it stays out of the parallel load.
	md, err := os.ReadFile("../docs/TUTORIAL.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks, err := parseTutorial(string(md))
	if err != nil {
		t.Fatal(err)
	}
	repo, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if sum, err := os.ReadFile(filepath.Join(repo, "go.sum")); err != nil {
		t.Fatal(err)
	} else if err := os.WriteFile(filepath.Join(dir, "go.sum"), sum, 0o644); err != nil {
		t.Fatal(err)
	}
	env := tutorialEnv(t, dir, repo)
	var last string
	counts := map[string]int{}
	for _, b := range blocks {
		counts[b.marker]++
		where := fmt.Sprintf("docs/TUTORIAL.md:%d", b.line)
		switch b.marker {
		case "file":
			path := filepath.Join(dir, filepath.FromSlash(b.arg))
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(b.body), 0o644); err != nil {
				t.Fatal(err)
			}
		case "up":
			startTutorialCluster(t, where, b.body, dir)
		case "background":
			startTutorialBackground(t, where, b.body, dir, env)
		case "run":
			last = runTutorialBlock(t, where, b.body, dir, env)
		case "output":
			if got, want := blanks(last), blanks(b.body); got != want && !strings.HasSuffix(got, "\n"+want) {
				t.Fatalf("%s: the command before printed\n%s\nthe tutorial claims\n%s", where, last, b.body)
			}
		}
	}
	if counts["up"] != 1 || counts["background"] != 1 || counts["run"] < 5 || counts["output"] < 3 || counts["file"] < 5 {
		t.Fatalf("the tutorial's marked blocks look incomplete: %v", counts)
	}
}

func tutorialEnv(t *testing.T, dir, repo string) []string {
	t.Helper()
	path := filepath.Dir(kubectlPath(t)) + string(os.PathListSeparator) + filepath.Dir(setpointBin) +
		string(os.PathListSeparator) + os.Getenv("PATH")
	flags := strings.TrimSpace(os.Getenv("GOFLAGS") + " -mod=mod")
	var env []string
	for _, kv := range os.Environ() {
		switch strings.SplitN(kv, "=", 2)[0] {
		case "PATH", "GOFLAGS", "KUBECONFIG", "SETPOINT", "PWD":
			continue
		}
		env = append(env, kv)
	}
	return append(env, "PATH="+path, "GOFLAGS="+flags, "SETPOINT="+repo, "PWD="+dir,
		"KUBECONFIG="+filepath.Join(dir, ".setpoint", "kubeconfig"))
}

// startTutorialCluster checks the block is `setpoint up` and runs it in
// dir, with --listen on a free port, until the test ends.
func startTutorialCluster(t *testing.T, where, body, dir string) {
	t.Helper()
	args := strings.Fields(body)
	if len(args) < 2 || args[0] != "setpoint" || args[1] != "up" || strings.Count(strings.TrimSpace(body), "\n") != 0 {
		t.Fatalf("%s: the up block must be one `setpoint up` command, got %q", where, body)
	}
	args = append(args[1:], "--listen", "127.0.0.1:"+strconv.Itoa(freePort(t)))
	p := &proc{name: "tutorial's setpoint up", out: &syncBuffer{}, exited: make(chan struct{})}
	p.cmd = exec.Command(setpointBin, args...)
	p.cmd.Dir = dir
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("%s: %v", where, err)
	}
	go func() { _ = p.cmd.Wait(); close(p.exited) }()
	t.Cleanup(func() {
		p.stop()
		if t.Failed() {
			t.Logf("output of setpoint up:\n%s", tail(p.out.String(), 40))
		}
	})
	p.waitOutput(t, "setpoint is up at", 90*time.Second)
}

// startTutorialBackground runs the block with bash in its own process
// group, stopped with SIGTERM (then SIGKILL) when the test ends.
func startTutorialBackground(t *testing.T, where, body, dir string, env []string) {
	t.Helper()
	out := &syncBuffer{}
	cmd := exec.Command("bash", "-e", "-c", body)
	cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = dir, env, out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatalf("%s: %v", where, err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(20 * time.Second):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-exited
		}
		if t.Failed() {
			t.Logf("output of %s (%s):\n%s", strings.TrimSpace(body), where, tail(out.String(), 60))
		}
	})
}

// runTutorialBlock runs the block with bash -e in dir and returns its
// stdout; a failure fails the test with both streams.
func runTutorialBlock(t *testing.T, where, body, dir string, env []string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-e", "-c", body)
	var out, errOut bytes.Buffer
	cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = dir, env, &out, &errOut
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s: %v\n%s\nstdout:\n%s\nstderr:\n%s", where, err, body, out.String(), errOut.String())
	}
	return out.String()
}

// blanks trims each line and collapses runs of blanks, so that column
// widths do not matter.
func blanks(s string) string {
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(s), "\n") {
		lines = append(lines, strings.Join(strings.Fields(l), " "))
	}
	return strings.Join(lines, "\n")
}
