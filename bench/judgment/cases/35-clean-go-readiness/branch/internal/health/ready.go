// Package health implements the readiness probe.
package health

import (
	"context"
	"encoding/json"
	"net/http"
	"time"
)

// Pinger is anything that can check its connection (pgxpool.Pool does).
type Pinger interface {
	Ping(ctx context.Context) error
}

// Ready answers 200 when every dependency answers a ping within timeout,
// 503 with the failing dependencies otherwise.
func Ready(deps map[string]Pinger, timeout time.Duration) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), timeout)
		defer cancel()
		failed := map[string]string{}
		for name, dep := range deps {
			if err := dep.Ping(ctx); err != nil {
				failed[name] = err.Error()
			}
		}
		w.Header().Set("Content-Type", "application/json")
		status := http.StatusOK
		if len(failed) > 0 {
			status = http.StatusServiceUnavailable
		}
		w.WriteHeader(status)
		if err := json.NewEncoder(w).Encode(map[string]any{"ready": len(failed) == 0, "failed": failed}); err != nil {
			return
		}
	}
}
