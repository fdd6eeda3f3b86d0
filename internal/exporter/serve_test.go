//go:build !router

package exporter

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"
)

// selfSigned writes a certificate for 127.0.0.1 and its key into dir.
func selfSigned(t *testing.T, dir string) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "wgperf test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600); err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	return certFile, keyFile, pool
}

// TestServeTLSAndBasicAuth is hole 9: with --web.config.file the metrics are
// served over TLS only, and only to a user with the right password.
func TestServeTLSAndBasicAuth(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile, pool := selfSigned(t, dir)
	hash, err := bcrypt.GenerateFromPassword([]byte("s3cret"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	conf := filepath.Join(dir, "web-config.yml")
	yml := "tls_server_config:\n  cert_file: " + certFile + "\n  key_file: " + keyFile + "\nbasic_auth_users:\n  prometheus: " + string(hash) + "\n"
	if err := os.WriteFile(conf, []byte(yml), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := CheckWebConfig(conf); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	site := &Site{Landing: &LandingPage{Description: "wg_peer_endpoint 1"}}
	go func() { served <- Serve(ctx, []net.Listener{ln}, site, conf, nil) }()
	defer func() {
		cancel()
		if err := <-served; err != nil {
			t.Errorf("Serve: %v", err)
		}
	}()

	url := "https://" + ln.Addr().String() + "/"
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	get := func(user, pass string) (int, string) {
		req, _ := http.NewRequest("GET", url, nil)
		if user != "" {
			req.SetBasicAuth(user, pass)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, _ := get("", ""); code != http.StatusUnauthorized {
		t.Errorf("no credentials: status %d, want 401", code)
	}
	if code, _ := get("prometheus", "wrong"); code != http.StatusUnauthorized {
		t.Errorf("wrong password: status %d, want 401", code)
	}
	if code, body := get("prometheus", "s3cret"); code != http.StatusOK || !strings.Contains(body, "wg_peer_endpoint") {
		t.Errorf("right password: status %d, body %q", code, body)
	}
	// Plain HTTP gets no metrics.
	plain := &http.Client{Timeout: 5 * time.Second}
	if resp, err := plain.Get("http://" + ln.Addr().String() + "/"); err == nil {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if strings.Contains(string(b), "wg_peer_endpoint") {
			t.Errorf("plain HTTP served the metrics")
		}
	}
}

func TestCheckWebConfigRefusesBadFiles(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yml")
	for _, yml := range []string{
		"tls_server_config:\n  cert_file: /nonexistent.pem\n  key_file: /nonexistent.key\n",
		"basic_auth_users:\n  prometheus: not-a-bcrypt-hash\n",
		"no_such_option: 1\n",
	} {
		if err := os.WriteFile(bad, []byte(yml), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := CheckWebConfig(bad); err == nil {
			t.Errorf("web config accepted:\n%s", yml)
		}
	}
	if err := CheckWebConfig(""); err != nil {
		t.Errorf("no web config: %v", err)
	}
}

// TestDeployWebConfig keeps deploy/web-config.yml valid: with its certificate
// paths pointed at a generated pair, exporter-toolkit accepts it.
func TestDeployWebConfig(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile, _ := selfSigned(t, dir)
	yml := readDeploy(t, "web-config.yml")
	yml = strings.ReplaceAll(yml, "/etc/wgperf/exporter.crt", certFile)
	yml = strings.ReplaceAll(yml, "/etc/wgperf/exporter.key", keyFile)
	conf := filepath.Join(dir, "web-config.yml")
	if err := os.WriteFile(conf, []byte(yml), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := CheckWebConfig(conf); err != nil {
		t.Errorf("deploy/web-config.yml: %v", err)
	}
}
