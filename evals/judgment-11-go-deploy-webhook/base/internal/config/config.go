// Package config reads the deployer's settings from the environment.
package config

import (
	"fmt"
	"os"
)

// Config holds the deployer's settings.
type Config struct {
	Listen        string
	WebhookSecret string
	WorkDir       string
	RegistryURL   string
}

// Load reads the configuration; WEBHOOK_SECRET is required.
func Load() (Config, error) {
	c := Config{
		Listen:        getenv("DEPLOYER_LISTEN", ":9000"),
		WebhookSecret: os.Getenv("WEBHOOK_SECRET"),
		WorkDir:       getenv("DEPLOYER_WORKDIR", "/srv/deployer"),
		RegistryURL:   getenv("DEPLOYER_REGISTRY", "https://registry.internal.example.com"),
	}
	if c.WebhookSecret == "" {
		return c, fmt.Errorf("WEBHOOK_SECRET is not set")
	}
	return c, nil
}

func getenv(key, fallback string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return fallback
}
