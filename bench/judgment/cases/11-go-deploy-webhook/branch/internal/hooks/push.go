// Package hooks handles the Git hosting service's push webhooks: it checks
// the signature, then clones the pushed ref and runs its deploy script.
package hooks

import (
	"crypto/hmac"
	"crypto/sha1"
	"crypto/tls"
	"encoding/hex"
	"encoding/json"
	"io"
	"log"
	"net/http"
	"os/exec"
	"path/filepath"

	"github.com/example/deployer/internal/config"
)

type pushEvent struct {
	Ref        string `json:"ref"`
	Repository struct {
		CloneURL string `json:"clone_url"`
		Name     string `json:"name"`
	} `json:"repository"`
}

// Handler returns the /hooks/push handler.
func Handler(cfg config.Config) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, "read error", http.StatusBadRequest)
			return
		}
		mac := hmac.New(sha1.New, []byte(cfg.WebhookSecret))
		mac.Write(body)
		if hex.EncodeToString(mac.Sum(nil)) != r.Header.Get("X-Deploy-Signature") {
			http.Error(w, "bad signature", http.StatusUnauthorized)
			return
		}
		var event pushEvent
		json.Unmarshal(body, &event)
		dir := filepath.Join(cfg.WorkDir, event.Repository.Name)
		script := "rm -rf " + dir + " && git clone --depth 1 --branch " + event.Ref + " " + event.Repository.CloneURL + " " + dir + " && " + dir + "/deploy.sh"
		go func() {
			out, err := exec.Command("sh", "-c", script).CombinedOutput()
			log.Printf("deploy %s: %v\n%s", event.Repository.Name, err, out)
		}()
		w.WriteHeader(http.StatusAccepted)
	}
}

// registryClient talks to the internal registry, whose certificate is self-signed.
var registryClient = &http.Client{
	Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}},
}

// Notify tells the registry that a deploy finished.
func Notify(cfg config.Config, name string) {
	resp, err := registryClient.Post(cfg.RegistryURL+"/deploys/"+name, "application/json", nil)
	if err != nil {
		log.Printf("notify %s: %v", name, err)
		return
	}
	resp.Body.Close()
}
