package main

import (
	"log"
	"net/http"
	"os"
	"time"

	"github.com/example/ginkit/internal/admin"
	"github.com/gin-gonic/gin"
)

func main() {
	router := gin.Default()
	router.GET("/ping", func(c *gin.Context) {
		c.String(http.StatusOK, "pong")
	})
	operators := router.Group("/admin", gin.BasicAuth(gin.Accounts{
		"ops": os.Getenv("OPS_PASSWORD"),
	}))
	admin.Register(operators)
	srv := &http.Server{
		Addr:              ":8080",
		Handler:           router,
		ReadHeaderTimeout: 5 * time.Second,
		WriteTimeout:      30 * time.Second,
	}
	log.Fatal(srv.ListenAndServe())
}
