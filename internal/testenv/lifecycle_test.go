package testenv

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestStartClusters(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if _, _, err := Binaries(); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	cs, err := StartClusters(ctx, "east", "west")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("2 clusters ready in %v", time.Since(start).Round(time.Millisecond))
	defer func() {
		for _, c := range cs {
			c.Stop()
		}
	}()
	if cs[0].URL == cs[1].URL || cs[0].EtcdURL == cs[1].EtcdURL {
		t.Fatalf("clusters share endpoints: %s %s", cs[0].URL, cs[1].URL)
	}
	if _, err := cs[0].Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "only-east"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs[1].Client.CoreV1().Namespaces().Get(ctx, "only-east", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("west sees east's namespace: %v", err)
	}
}

// TestProcessesDieWithTest runs this test binary as a child that starts a
// cluster, SIGKILLs it, and checks that etcd and kube-apiserver go away.
func TestProcessesDieWithTest(t *testing.T) {
	if os.Getenv("TESTENV_CHILD") == "1" {
		c, err := StartCluster(context.Background(), "child", Options{})
		if err != nil {
			fmt.Println("ERROR", err)
			os.Exit(1)
		}
		fmt.Printf("READY %s %s %s\n", c.Dir, c.URL, c.EtcdURL)
		time.Sleep(time.Minute)
		os.Exit(2)
	}
	if testing.Short() {
		t.Skip("starts a cluster in a child process")
	}
	if _, _, err := Binaries(); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestProcessesDieWithTest$")
	cmd.Env = append(os.Environ(), "TESTENV_CHILD=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	var urls []string
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if f := strings.Fields(sc.Text()); len(f) == 4 && f[0] == "READY" {
			// A killed test cannot clean up its cluster's directory.
			defer os.RemoveAll(f[1])
			urls = f[2:]
			break
		}
		t.Log("child:", sc.Text())
	}
	if urls == nil {
		t.Fatal("child did not start a cluster")
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	for _, u := range urls {
		addr := strings.TrimPrefix(strings.TrimPrefix(u, "https://"), "http://")
		deadline := time.Now().Add(10 * time.Second)
		for {
			conn, err := net.Dial("tcp", addr)
			if err != nil {
				break
			}
			conn.Close()
			if time.Now().After(deadline) {
				t.Fatalf("%s still listening 10s after the test process was killed", u)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
}

func TestStartErrorHasLogTail(t *testing.T) {
	if _, _, err := Binaries(); err != nil {
		t.Fatal(err)
	}
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	base := t.TempDir()
	_, err = StartCluster(context.Background(), "broken", Options{
		BaseDir:       base,
		ExtraEtcdArgs: []string{"--listen-client-urls=http://" + busy.Addr().String()},
	})
	if err == nil {
		t.Fatal("StartCluster succeeded with etcd's client port taken")
	}
	t.Logf("error (expected): %.300s", err)
	if !strings.Contains(err.Error(), "address already in use") || !strings.Contains(err.Error(), "etcd exited") {
		t.Errorf("error lacks the log tail: %v", err)
	}
	if left, _ := os.ReadDir(base); len(left) != 0 {
		t.Errorf("failed starts left %d dirs behind", len(left))
	}
}
