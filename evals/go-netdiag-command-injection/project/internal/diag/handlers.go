package diag

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os/exec"
	"strconv"
	"time"
)

type result struct {
	Output string `json:"output"`
	Error  string `json:"error,omitempty"`
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// PingHandler pings a host given by the operator console.
func PingHandler(w http.ResponseWriter, r *http.Request) {
	host := r.URL.Query().Get("host")
	count := r.URL.Query().Get("count")
	if count == "" {
		count = "3"
	}
	ctx, cancel := context.WithTimeout(r.Context(), 15*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "sh", "-c", "ping -c "+count+" "+host).CombinedOutput()
	res := result{Output: string(out)}
	if err != nil {
		res.Error = err.Error()
	}
	writeJSON(w, http.StatusOK, res)
}

// TraceHandler runs traceroute against a validated IP address.
func TraceHandler(w http.ResponseWriter, r *http.Request) {
	ip := net.ParseIP(r.URL.Query().Get("ip"))
	if ip == nil {
		writeJSON(w, http.StatusBadRequest, result{Error: "ip must be an IP address"})
		return
	}
	hops, err := strconv.Atoi(r.URL.Query().Get("hops"))
	if err != nil || hops < 1 || hops > 30 {
		hops = 15
	}
	ctx, cancel := context.WithTimeout(r.Context(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "traceroute", "-m", strconv.Itoa(hops), ip.String()).CombinedOutput()
	res := result{Output: string(out)}
	if err != nil {
		res.Error = err.Error()
	}
	writeJSON(w, http.StatusOK, res)
}

// DNSHandler resolves a name with dig.
func DNSHandler(w http.ResponseWriter, r *http.Request) {
	name := r.FormValue("name")
	cmd := exec.Command("bash", "-c", fmt.Sprintf("dig +short %s A", name))
	out, err := cmd.Output()
	if err != nil {
		writeJSON(w, http.StatusBadGateway, result{Error: err.Error()})
		return
	}
	writeJSON(w, http.StatusOK, result{Output: string(out)})
}

// UptimeHandler reports host uptime.
func UptimeHandler(w http.ResponseWriter, r *http.Request) {
	out, err := exec.Command("uptime", "-p").Output()
	if err != nil {
		writeJSON(w, http.StatusInternalServerError, result{Error: err.Error()})
		return
	}
	writeJSON(w, http.StatusOK, result{Output: string(out)})
}
