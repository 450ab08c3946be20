// Command quic-go-peer is an HTTP/3 client and file server built on
// quic-go's http3 package, for h3-download's interop tests
// (tests/interop_quic_go.rs).
//
//	quic-go-peer client URL OUT [--ca PEM | --insecure] [--header NAME:VALUE]...
//	quic-go-peer server --addr 127.0.0.1:0 --root DIR --cert PEM --key PEM
//	quic-go-peer cert --cert PEM --key PEM
//
// client makes one GET, writes the body to OUT and prints one JSON line:
// {"status", "proto", "bytes", "sha256"}. The server's certificate is
// verified against the system's roots, or the certificates in --ca;
// --insecure skips verification.
//
// server serves the files under --root (net/http's file server: ranges,
// If-Range against the strong ETag it is given here, HEAD), each response
// with a strong ETag and a Repr-Digest (RFC 9530, sha-256), and prints its
// bound address ("127.0.0.1:PORT") as the first line on stdout once it
// listens, then serves until killed.
//
// cert writes a self-signed P-256 certificate for localhost, 127.0.0.1
// and ::1 and its key, both PEM, for server's --cert and --key.
//
// QLOGDIR set: both ends write quic-go's qlog (JSON-SEQ) there; client
// exits only once its qlog is complete.
//
// Errors: one line "quic-go-peer: error: ..." on stderr, exit status 1
// (2 for a bad command line).
package main

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/http3"
	"github.com/quic-go/quic-go/qlog"
	"github.com/quic-go/quic-go/qlogwriter"
)

const usage = `usage:
  quic-go-peer client URL OUT [--ca PEM | --insecure] [--header NAME:VALUE]...
  quic-go-peer server --addr HOST:PORT --root DIR --cert PEM --key PEM
  quic-go-peer cert --cert PEM --key PEM`

// usageError is a bad command line (exit status 2).
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg + "\n" + usage }

func main() {
	err := run(os.Args[1:])
	if err == nil {
		return
	}
	fmt.Fprintf(os.Stderr, "quic-go-peer: error: %v\n", err)
	if errors.As(err, new(usageError)) {
		os.Exit(2)
	}
	os.Exit(1)
}

func run(args []string) error {
	if len(args) == 0 {
		return usageError{"no command given (client, server or cert)"}
	}
	switch args[0] {
	case "client":
		return client(args[1:])
	case "server":
		return server(args[1:])
	case "cert":
		return cert(args[1:])
	}
	return usageError{fmt.Sprintf("unknown command %q (client, server or cert)", args[0])}
}

// headers collects repeated --header NAME:VALUE options.
type headers []string

func (h *headers) String() string { return strings.Join(*h, ", ") }

func (h *headers) Set(v string) error {
	if name, _, ok := strings.Cut(v, ":"); !ok || strings.TrimSpace(name) == "" {
		return fmt.Errorf("%q is not NAME:VALUE", v)
	}
	*h = append(*h, v)
	return nil
}

// parse parses flags and positional arguments in any order; it returns
// the positional ones, which must number `want`.
func parse(fs *flag.FlagSet, args []string, want int) ([]string, error) {
	fs.SetOutput(io.Discard)
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, usageError{fmt.Sprintf("%s: %v", fs.Name(), err)}
		}
		if fs.NArg() == 0 {
			break
		}
		positional = append(positional, fs.Arg(0))
		args = fs.Args()[1:]
	}
	if len(positional) != want {
		return nil, usageError{fmt.Sprintf("%s: %d arguments given, %d wanted", fs.Name(), len(positional), want)}
	}
	return positional, nil
}

// qlogs writes quic-go's qlog of each connection to QLOGDIR, as
// qlog.DefaultConnectionTracer does (<odcid>_<client|server>.sqlog,
// JSON-SEQ), and lets the program wait until every file is complete before
// it exits: quic-go closes a trace when its connection's run loop ends,
// which may be after Transport.Close has returned.
type qlogs struct{ open sync.WaitGroup }

func (q *qlogs) tracer(_ context.Context, isClient bool, odcid qlog.ConnectionID) qlogwriter.Trace {
	dir := os.Getenv("QLOGDIR")
	if dir == "" {
		return nil
	}
	role := "server"
	if isClient {
		role = "client"
	}
	path := filepath.Join(dir, fmt.Sprintf("%s_%s.sqlog", odcid, role))
	f, err := os.Create(path)
	if err != nil {
		fmt.Fprintf(os.Stderr, "quic-go-peer: warning: no qlog: %v\n", err)
		return nil
	}
	q.open.Add(1)
	trace := qlogwriter.NewConnectionFileSeq(&qlogFile{bufio.NewWriter(f), f, &q.open}, isClient, odcid)
	go trace.Run()
	return trace
}

// wait waits up to `limit` for every qlog file to be complete.
func (q *qlogs) wait(limit time.Duration) error {
	done := make(chan struct{})
	go func() { q.open.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-time.After(limit):
		return fmt.Errorf("the qlog files were not complete %v after the connections closed", limit)
	}
}

// qlogFile is a buffered qlog file that says when it is closed.
type qlogFile struct {
	*bufio.Writer
	f    *os.File
	open *sync.WaitGroup
}

func (w *qlogFile) Close() error {
	defer w.open.Done()
	err := w.Flush()
	if cerr := w.f.Close(); err == nil {
		err = cerr
	}
	return err
}

func client(args []string) error {
	fs := flag.NewFlagSet("client", flag.ContinueOnError)
	ca := fs.String("ca", "", "trust only the certificates in this PEM file")
	insecure := fs.Bool("insecure", false, "do not verify the server's certificate")
	var extra headers
	fs.Var(&extra, "header", "a request header NAME:VALUE (repeatable)")
	pos, err := parse(fs, args, 2)
	if err != nil {
		return err
	}
	url, out := pos[0], pos[1]
	if *ca != "" && *insecure {
		return usageError{"client: --ca and --insecure exclude each other"}
	}
	tlsConf := &tls.Config{InsecureSkipVerify: *insecure}
	if *ca != "" {
		text, err := os.ReadFile(*ca)
		if err != nil {
			return fmt.Errorf("--ca: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(text) {
			return fmt.Errorf("--ca %s: no PEM certificate in it", *ca)
		}
		tlsConf.RootCAs = pool
	}
	var traces qlogs
	transport := &http3.Transport{TLSClientConfig: tlsConf, QUICConfig: &quic.Config{Tracer: traces.tracer}}
	defer transport.Close()

	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return fmt.Errorf("URL %q: %w", url, err)
	}
	for _, h := range extra {
		name, value, _ := strings.Cut(h, ":")
		req.Header.Add(strings.TrimSpace(name), strings.TrimSpace(value))
	}
	// A bound on the whole exchange: a test never hangs on it.
	resp, err := (&http.Client{Transport: transport, Timeout: 2 * time.Minute}).Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	hash := sha256.New()
	n, err := io.Copy(io.MultiWriter(f, hash), resp.Body)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("after %d bytes of the body: %w", n, err)
	}
	resp.Body.Close()
	transport.Close()
	if err := traces.wait(10 * time.Second); err != nil {
		return err
	}
	return json.NewEncoder(os.Stdout).Encode(map[string]any{
		"status": resp.StatusCode,
		"proto":  resp.Proto,
		"bytes":  n,
		"sha256": hex.EncodeToString(hash.Sum(nil)),
	})
}

func server(args []string) error {
	fs := flag.NewFlagSet("server", flag.ContinueOnError)
	addr := fs.String("addr", "127.0.0.1:0", "UDP address to listen on")
	root := fs.String("root", "", "the directory served")
	certFile := fs.String("cert", "", "the certificate, PEM")
	keyFile := fs.String("key", "", "its private key, PEM")
	if _, err := parse(fs, args, 0); err != nil {
		return err
	}
	if *root == "" || *certFile == "" || *keyFile == "" {
		return usageError{"server: --root, --cert and --key are required"}
	}
	if info, err := os.Stat(*root); err != nil || !info.IsDir() {
		return fmt.Errorf("--root %s: not a directory", *root)
	}
	pair, err := tls.LoadX509KeyPair(*certFile, *keyFile)
	if err != nil {
		return fmt.Errorf("--cert/--key: %w", err)
	}
	udpAddr, err := net.ResolveUDPAddr("udp", *addr)
	if err != nil {
		return fmt.Errorf("--addr %s: %w", *addr, err)
	}
	conn, err := net.ListenUDP("udp", udpAddr)
	if err != nil {
		return err
	}
	srv := &http3.Server{
		TLSConfig:  http3.ConfigureTLSConfig(&tls.Config{Certificates: []tls.Certificate{pair}}),
		QUICConfig: &quic.Config{Tracer: (&qlogs{}).tracer},
		Handler:    files{root: *root, fs: http.FileServer(http.Dir(*root))},
	}
	fmt.Println(conn.LocalAddr())
	return srv.Serve(conn)
}

// files adds a strong ETag and a Repr-Digest, both from the file's
// SHA-256, to net/http's file server (which then honours If-Range).
type files struct {
	root string
	fs   http.Handler
}

func (f files) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	path := filepath.Join(f.root, filepath.FromSlash(filepath.Clean("/"+r.URL.Path)))
	if file, err := os.Open(path); err == nil {
		hash := sha256.New()
		_, err := io.Copy(hash, file)
		file.Close()
		if err == nil {
			sum := hash.Sum(nil)
			w.Header().Set("ETag", `"`+hex.EncodeToString(sum[:16])+`"`)
			// RFC 9530 section 3: Repr-Digest: sha-256=:<base64>:
			w.Header().Set("Repr-Digest", "sha-256=:"+base64.StdEncoding.EncodeToString(sum)+":")
		}
	}
	f.fs.ServeHTTP(w, r)
}

func cert(args []string) error {
	fs := flag.NewFlagSet("cert", flag.ContinueOnError)
	certFile := fs.String("cert", "", "where the certificate goes, PEM")
	keyFile := fs.String("key", "", "where its private key goes, PEM")
	if _, err := parse(fs, args, 0); err != nil {
		return err
	}
	if *certFile == "" || *keyFile == "" {
		return usageError{"cert: --cert and --key are required"}
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 64))
	if err != nil {
		return err
	}
	now := time.Now()
	template := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: "localhost"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(30 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
		DNSNames:              []string{"localhost"},
		IPAddresses:           []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("::1")},
	}
	der, err := x509.CreateCertificate(rand.Reader, template, template, &key.PublicKey, key)
	if err != nil {
		return err
	}
	keyDer, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return err
	}
	if err := os.WriteFile(*keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDer}), 0o600); err != nil {
		return err
	}
	return os.WriteFile(*certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644)
}
