// Command testcluster runs a throwaway, hermetic Kubernetes control plane for
// end-to-end tests: one etcd and one kube-apiserver, both listening only on
// 127.0.0.1 on free ports picked at start, with a fresh PKI.
//
// Protocol (see README.md): once the API server is ready it prints KEY=VALUE
// lines on stdout, KUBECONFIG=<path> last, and then runs until SIGTERM,
// SIGINT or SIGHUP, until its parent process exits, or (with
// -exit-on-stdin-eof) until its stdin closes. It then stops kube-apiserver
// and etcd, waits for both, and exits 0. It exits 1 if the cluster cannot be
// started, with the reason and the tail of the component logs on stderr.
package main

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Children are started from the main goroutine, locked to the main OS thread,
// so that their Pdeathsig (tied to the forking thread, not the process) fires
// only when this process dies.
func init() { runtime.LockOSThread() }

type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, " ") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }

type options struct {
	stateDir       string
	binDir         string
	timeout        time.Duration
	stopTimeout    time.Duration
	exitOnStdinEOF bool
	apiserverArgs  stringList
	etcdArgs       stringList
	saAdmission    bool
	verbose        bool
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "testcluster: "+format+"\n", args...)
}

func main() {
	var o options
	flag.StringVar(&o.stateDir, "state-dir", "", "directory for PKI, kubeconfig, etcd data and logs (created if missing; kept on exit). Default: a new temporary directory, removed on exit")
	flag.StringVar(&o.binDir, "bin-dir", "", "directory holding the kube-apiserver and etcd binaries (default: the directory of this executable)")
	flag.DurationVar(&o.timeout, "timeout", 3*time.Minute, "how long to wait for the cluster to become ready")
	flag.DurationVar(&o.stopTimeout, "stop-timeout", 15*time.Second, "how long each component gets to exit after SIGTERM before it is killed")
	flag.BoolVar(&o.exitOnStdinEOF, "exit-on-stdin-eof", false, "also shut down when stdin reaches end of file (for callers that hold a pipe to stdin)")
	flag.Var(&o.apiserverArgs, "apiserver-arg", "extra kube-apiserver flag, e.g. --apiserver-arg=--v=4 (repeatable; appended after the defaults: a scalar flag given again wins, a list flag given again is appended to)")
	flag.Var(&o.etcdArgs, "etcd-arg", "extra etcd flag (repeatable)")
	flag.BoolVar(&o.saAdmission, "service-account-admission", false, "keep the ServiceAccount admission plugin on (pods are then rejected unless their ServiceAccount exists; nothing creates \"default\" here)")
	flag.BoolVar(&o.verbose, "v", false, "log progress to stderr")
	flag.Parse()
	if flag.NArg() != 0 {
		fmt.Fprintf(os.Stderr, "testcluster: unexpected arguments: %q\n", flag.Args())
		flag.Usage()
		os.Exit(2)
	}
	os.Exit(run(o))
}

func run(o options) int {
	// Stop requests: signals, parent death, optionally stdin EOF.
	stop := make(chan string, 4)
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	go func() {
		for s := range sigs {
			stop <- "signal " + s.String()
		}
	}()
	go watchParent(stop)
	if o.exitOnStdinEOF {
		go func() {
			_, _ = io.Copy(io.Discard, os.Stdin)
			stop <- "stdin closed"
		}()
	}

	if o.binDir == "" {
		exe, err := os.Executable()
		if err != nil {
			logf("error: cannot locate own executable: %v", err)
			return 1
		}
		o.binDir = filepath.Dir(exe)
	}
	for _, b := range []string{"kube-apiserver", "etcd"} {
		if _, err := os.Stat(filepath.Join(o.binDir, b)); err != nil {
			logf("error: %s not found in %s (run tests/cluster/build.sh): %v", b, o.binDir, err)
			return 1
		}
	}

	removeState := false
	if o.stateDir == "" {
		d, err := os.MkdirTemp("", "testcluster-")
		if err != nil {
			logf("error: %v", err)
			return 1
		}
		o.stateDir, removeState = d, true
	}
	abs, err := filepath.Abs(o.stateDir)
	if err != nil {
		logf("error: %v", err)
		return 1
	}
	o.stateDir = abs
	if removeState {
		defer os.RemoveAll(o.stateDir)
	}

	c := &cluster{o: o}
	defer c.shutdown()

	if err := c.start(stop); err != nil {
		var stopped errStopped
		if errors.As(err, &stopped) {
			logf("stopping before ready: %s", string(stopped))
			return 0
		}
		logf("error: %v", err)
		c.dumpLogs()
		return 1
	}

	env := c.envLines()
	if err := os.WriteFile(filepath.Join(o.stateDir, "env"), []byte(strings.Join(env, "\n")+"\n"), 0o644); err != nil {
		logf("error: %v", err)
		return 1
	}
	for _, l := range env {
		fmt.Fprintln(os.Stdout, l)
	}

	select {
	case why := <-stop:
		if o.verbose {
			logf("stopping: %s", why)
		}
		return 0
	case err := <-c.apiserver.exited:
		c.apiserver.done = true
		logf("error: kube-apiserver exited unexpectedly: %v", err)
		c.dumpLogs()
		return 1
	case err := <-c.etcd.exited:
		c.etcd.done = true
		logf("error: etcd exited unexpectedly: %v", err)
		c.dumpLogs()
		return 1
	}
}

// watchParent requests a stop when the process that started us exits (we get
// re-parented). Unlike PR_SET_PDEATHSIG on ourselves, this is about the parent
// process, not the parent thread, so a caller may spawn us from a short-lived
// thread (e.g. a Rust test thread).
func watchParent(stop chan<- string) {
	ppid := os.Getppid()
	if ppid <= 1 {
		return
	}
	for range time.Tick(500 * time.Millisecond) {
		if os.Getppid() != ppid {
			stop <- "parent process exited"
			return
		}
	}
}

type errStopped string

func (e errStopped) Error() string { return "stopped: " + string(e) }

type proc struct {
	name      string
	cmd       *exec.Cmd
	log       string
	logOffset int64 // where this run's output starts in log
	exited    chan error
	done      bool
}

// addrInUse tells whether this run of the process failed to bind.
func (p *proc) addrInUse() bool {
	f, err := os.Open(p.log)
	if err != nil {
		return false
	}
	defer f.Close()
	if _, err := f.Seek(p.logOffset, io.SeekStart); err != nil {
		return false
	}
	out, _ := io.ReadAll(f)
	return bytes.Contains(out, []byte("address already in use"))
}

type cluster struct {
	o                      options
	etcdPort, etcdPeerPort int
	apiPort                int
	etcd, apiserver        *proc
	kubeconfig, caFile     string
	adminCert, adminKey    string
	adminTLS               tls.Certificate
	caPool                 *x509.CertPool
}

func (c *cluster) start(stop <-chan string) error {
	// Every start is a fresh cluster: earlier etcd data and logs go.
	for _, d := range []string{"etcd", "logs"} {
		if err := os.RemoveAll(filepath.Join(c.o.stateDir, d)); err != nil {
			return err
		}
	}
	for _, d := range []string{"pki", "logs", "etcd"} {
		if err := os.MkdirAll(filepath.Join(c.o.stateDir, d), 0o700); err != nil {
			return err
		}
	}
	if err := c.writePKI(); err != nil {
		return fmt.Errorf("generating certificates: %w", err)
	}
	deadline := time.Now().Add(c.o.timeout)

	// A free port found by binding :0 may be taken by someone else before the
	// component binds it; retry the start with new ports when a component
	// exits during start-up because its address is in use.
	const attempts = 3
	var lastErr error
	for attempt := 1; attempt <= attempts; attempt++ {
		err := c.startOnce(stop, deadline)
		if err == nil {
			return nil
		}
		var stopped errStopped
		if errors.As(err, &stopped) || time.Now().After(deadline) {
			return err
		}
		var exited errExited
		if !errors.As(err, &exited) || !exited.addrInUse || attempt == attempts {
			return err
		}
		lastErr = err
		logf("attempt %d failed (%v); retrying with new ports", attempt, err)
		c.shutdown()
		if err := os.RemoveAll(filepath.Join(c.o.stateDir, "etcd")); err != nil {
			return err
		}
	}
	return lastErr
}

type errExited struct {
	name      string
	err       error
	addrInUse bool
}

func (e errExited) Error() string { return fmt.Sprintf("%s exited during start-up: %v", e.name, e.err) }

func (c *cluster) startOnce(stop <-chan string, deadline time.Time) error {
	ports, err := freePorts(3)
	if err != nil {
		return err
	}
	c.etcdPort, c.etcdPeerPort, c.apiPort = ports[0], ports[1], ports[2]
	etcdURL := fmt.Sprintf("http://127.0.0.1:%d", c.etcdPort)
	peerURL := fmt.Sprintf("http://127.0.0.1:%d", c.etcdPeerPort)

	etcdArgs := []string{
		"--name=testcluster",
		"--data-dir=" + filepath.Join(c.o.stateDir, "etcd"),
		"--listen-client-urls=" + etcdURL,
		"--advertise-client-urls=" + etcdURL,
		"--listen-peer-urls=" + peerURL,
		"--initial-advertise-peer-urls=" + peerURL,
		"--initial-cluster=testcluster=" + peerURL,
		"--initial-cluster-state=new",
		"--unsafe-no-fsync=true", // throwaway data; spares the disk
		"--log-level=warn",
	}
	etcdArgs = append(etcdArgs, c.o.etcdArgs...)
	if c.etcd, err = c.spawn("etcd", etcdArgs); err != nil {
		return err
	}
	if err := c.waitFor(stop, deadline, c.etcd, c.etcdHealthy); err != nil {
		return err
	}
	if c.o.verbose {
		logf("etcd ready at %s", etcdURL)
	}

	pki := filepath.Join(c.o.stateDir, "pki")
	apiArgs := []string{
		"--etcd-servers=" + etcdURL,
		"--bind-address=127.0.0.1",
		"--advertise-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(c.apiPort),
		"--tls-cert-file=" + filepath.Join(pki, "apiserver.crt"),
		"--tls-private-key-file=" + filepath.Join(pki, "apiserver.key"),
		"--client-ca-file=" + c.caFile,
		"--authorization-mode=Node,RBAC",
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file=" + filepath.Join(pki, "sa.pub"),
		"--service-account-signing-key-file=" + filepath.Join(pki, "sa.key"),
		"--service-cluster-ip-range=10.0.0.0/24",
		// The "kubernetes" Service keeps no Endpoints: 127.0.0.1 is not a
		// valid endpoint address, and nothing here would dial it anyway.
		"--endpoint-reconciler-type=none",
		// Defaults stay on (NamespaceLifecycle, LimitRanger, the admission
		// webhooks, ValidatingAdmissionPolicy, PodSecurity, ...); NodeRestriction
		// is added as on real clusters. ServiceAccount admission is off: it
		// rejects pods whose ServiceAccount does not exist, and no
		// kube-controller-manager runs here to create "default" in each
		// namespace.
		"--enable-admission-plugins=NodeRestriction",
		"--allow-privileged=true",
		"--profiling=false",
		"--v=1",
	}
	if !c.o.saAdmission {
		apiArgs = append(apiArgs, "--disable-admission-plugins=ServiceAccount")
	}
	apiArgs = append(apiArgs, c.o.apiserverArgs...)
	if c.apiserver, err = c.spawn("kube-apiserver", apiArgs); err != nil {
		return err
	}
	if err := c.waitFor(stop, deadline, c.apiserver, c.apiserverReady); err != nil {
		return err
	}
	if err := c.writeKubeconfig(); err != nil {
		return err
	}
	if c.o.verbose {
		logf("kube-apiserver ready at https://127.0.0.1:%d", c.apiPort)
	}
	return nil
}

func (c *cluster) spawn(name string, args []string) (*proc, error) {
	logPath := filepath.Join(c.o.stateDir, "logs", name+".log")
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	offset, _ := f.Seek(0, io.SeekEnd)
	fmt.Fprintf(f, "=== %s %s %s\n", time.Now().Format(time.RFC3339), name, strings.Join(args, " "))
	cmd := exec.Command(filepath.Join(c.o.binDir, name), args...)
	cmd.Dir = c.o.stateDir
	cmd.Env = childEnv()
	cmd.Stdin = nil
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Setpgid:   true,            // signals to our process group do not reach it directly; we order the shutdown
		Pdeathsig: syscall.SIGKILL, // if we die (even SIGKILL), so does it
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	p := &proc{name: name, cmd: cmd, log: logPath, logOffset: offset, exited: make(chan error, 1)}
	go func() { p.exited <- cmd.Wait() }()
	if c.o.verbose {
		logf("started %s (pid %d), log %s", name, cmd.Process.Pid, logPath)
	}
	return p, nil
}

// childEnv is our environment without proxy settings: the components only
// ever talk to 127.0.0.1 (etcd, webhooks served by the test), and must never
// route that through a proxy.
func childEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		switch strings.ToUpper(name) {
		case "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY":
			continue
		}
		env = append(env, kv)
	}
	return env
}

// waitFor polls check until it succeeds, the process exits, a stop is
// requested or the deadline passes.
func (c *cluster) waitFor(stop <-chan string, deadline time.Time, p *proc, check func() error) error {
	var last error
	for {
		if last = check(); last == nil {
			return nil
		}
		select {
		case why := <-stop:
			return errStopped(why)
		case err := <-p.exited:
			p.done = true
			return errExited{p.name, err, p.addrInUse()}
		case <-time.After(250 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s not ready after %s: %v", p.name, c.o.timeout, last)
		}
	}
}

func (c *cluster) etcdHealthy() error {
	cl := http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{}}
	defer cl.CloseIdleConnections()
	resp, err := cl.Get(fmt.Sprintf("http://127.0.0.1:%d/health", c.etcdPort))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || !bytes.Contains(body, []byte(`"health":"true"`)) {
		return fmt.Errorf("etcd /health: %d %s", resp.StatusCode, strings.TrimSpace(string(body)))
	}
	return nil
}

// apiserverReady: /readyz is ok (all post-start hooks, including RBAC and
// priority-class bootstrap, have run) and the bootstrap namespaces exist.
func (c *cluster) apiserverReady() error {
	cl := http.Client{
		Timeout: 5 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{
			RootCAs:      c.caPool,
			Certificates: []tls.Certificate{c.adminTLS},
			ServerName:   "127.0.0.1",
		}},
	}
	defer cl.CloseIdleConnections()
	base := fmt.Sprintf("https://127.0.0.1:%d", c.apiPort)
	for _, path := range []string{"/readyz", "/api/v1/namespaces/default", "/api/v1/namespaces/kube-system"} {
		resp, err := cl.Get(base + path)
		if err != nil {
			return err
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			return fmt.Errorf("GET %s: %d %s", path, resp.StatusCode, firstLine(string(body)))
		}
	}
	return nil
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " ..."
	}
	return s
}

func (c *cluster) envLines() []string {
	return []string{
		"STATE_DIR=" + c.o.stateDir,
		"ETCD=" + fmt.Sprintf("http://127.0.0.1:%d", c.etcdPort),
		"APISERVER=" + fmt.Sprintf("https://127.0.0.1:%d", c.apiPort),
		"CA_FILE=" + c.caFile,
		"ADMIN_CERT_FILE=" + c.adminCert,
		"ADMIN_KEY_FILE=" + c.adminKey,
		"KUBECONFIG=" + c.kubeconfig,
	}
}

// shutdown stops kube-apiserver, then etcd: SIGTERM, then SIGKILL after
// stopTimeout; it always waits for each to be reaped.
func (c *cluster) shutdown() {
	for _, p := range []*proc{c.apiserver, c.etcd} {
		if p == nil || p.done {
			continue
		}
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.exited:
		case <-time.After(c.o.stopTimeout):
			logf("%s did not exit %s after SIGTERM; killing it", p.name, c.o.stopTimeout)
			_ = p.cmd.Process.Kill()
			<-p.exited
		}
		p.done = true
	}
	c.apiserver, c.etcd = nil, nil
}

func (c *cluster) dumpLogs() {
	for _, name := range []string{"etcd", "kube-apiserver"} {
		path := filepath.Join(c.o.stateDir, "logs", name+".log")
		data, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
		if len(lines) > 40 {
			lines = lines[len(lines)-40:]
		}
		fmt.Fprintf(os.Stderr, "----- last lines of %s -----\n%s\n", path, strings.Join(lines, "\n"))
	}
}

// freePorts returns n distinct free TCP ports on 127.0.0.1.
func freePorts(n int) ([]int, error) {
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	var ports []int
	for i := 0; i < n; i++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// ---- PKI -------------------------------------------------------------------

func (c *cluster) writePKI() error {
	dir := filepath.Join(c.o.stateDir, "pki")
	now := time.Now()
	notBefore, notAfter := now.Add(-time.Hour), now.Add(365*24*time.Hour)

	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	caTmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: "testcluster-ca"},
		NotBefore:             notBefore,
		NotAfter:              notAfter,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, caKey.Public(), caKey)
	if err != nil {
		return err
	}
	caCert, err := x509.ParseCertificate(caDER)
	if err != nil {
		return err
	}
	c.caFile = filepath.Join(dir, "ca.crt")
	if err := writePEM(c.caFile, "CERTIFICATE", caDER, 0o644); err != nil {
		return err
	}
	if err := writeKey(filepath.Join(dir, "ca.key"), caKey); err != nil {
		return err
	}
	c.caPool = x509.NewCertPool()
	c.caPool.AddCert(caCert)

	issue := func(name string, tmpl *x509.Certificate) (certPEM, keyPEM []byte, err error) {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			return nil, nil, err
		}
		tmpl.SerialNumber = serial()
		tmpl.NotBefore, tmpl.NotAfter = notBefore, notAfter
		tmpl.KeyUsage = x509.KeyUsageDigitalSignature
		der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, key.Public(), caKey)
		if err != nil {
			return nil, nil, err
		}
		if err := writePEM(filepath.Join(dir, name+".crt"), "CERTIFICATE", der, 0o644); err != nil {
			return nil, nil, err
		}
		if err := writeKey(filepath.Join(dir, name+".key"), key); err != nil {
			return nil, nil, err
		}
		kder, _ := x509.MarshalPKCS8PrivateKey(key)
		return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
			pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kder}), nil
	}

	// Serving certificate. 10.0.0.1 is the "kubernetes" Service IP of the
	// configured (never routed) service range; only 127.0.0.1 is ever dialled.
	if _, _, err := issue("apiserver", &x509.Certificate{
		Subject:     pkix.Name{CommonName: "kube-apiserver"},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("10.0.0.1")},
		DNSNames: []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc",
			"kubernetes.default.svc.cluster.local"},
	}); err != nil {
		return err
	}

	// Admin client identity: group system:masters (cluster-admin, may impersonate).
	certPEM, keyPEM, err := issue("admin", &x509.Certificate{
		Subject:     pkix.Name{CommonName: "testcluster-admin", Organization: []string{"system:masters"}},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	})
	if err != nil {
		return err
	}
	c.adminCert, c.adminKey = filepath.Join(dir, "admin.crt"), filepath.Join(dir, "admin.key")
	if c.adminTLS, err = tls.X509KeyPair(certPEM, keyPEM); err != nil {
		return err
	}

	// Service-account token signing key pair.
	saKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return err
	}
	if err := writeKey(filepath.Join(dir, "sa.key"), saKey); err != nil {
		return err
	}
	pubDER, err := x509.MarshalPKIXPublicKey(saKey.Public())
	if err != nil {
		return err
	}
	return writePEM(filepath.Join(dir, "sa.pub"), "PUBLIC KEY", pubDER, 0o644)
}

func serial() *big.Int {
	n, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 120))
	return n.Add(n, big.NewInt(1))
}

func writeKey(path string, key crypto.Signer) error {
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return err
	}
	return writePEM(path, "PRIVATE KEY", der, 0o600)
}

func writePEM(path, typ string, der []byte, mode os.FileMode) error {
	return os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), mode)
}

func (c *cluster) writeKubeconfig() error {
	read := func(p string) (string, error) {
		b, err := os.ReadFile(p)
		return base64.StdEncoding.EncodeToString(b), err
	}
	ca, err := read(c.caFile)
	if err != nil {
		return err
	}
	crt, err := read(c.adminCert)
	if err != nil {
		return err
	}
	key, err := read(c.adminKey)
	if err != nil {
		return err
	}
	var b strings.Builder
	fmt.Fprintf(&b, `apiVersion: v1
kind: Config
clusters:
- name: testcluster
  cluster:
    server: https://127.0.0.1:%d
    certificate-authority-data: %s
users:
- name: admin
  user:
    client-certificate-data: %s
    client-key-data: %s
contexts:
- name: testcluster
  context:
    cluster: testcluster
    user: admin
current-context: testcluster
`, c.apiPort, ca, crt, key)
	c.kubeconfig = filepath.Join(c.o.stateDir, "kubeconfig")
	tmp := c.kubeconfig + ".tmp"
	if err := os.WriteFile(tmp, []byte(b.String()), 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, c.kubeconfig)
}
