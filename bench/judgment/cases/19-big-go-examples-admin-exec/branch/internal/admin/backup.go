// Package admin holds operator endpoints, mounted under /admin behind the
// operator basic-auth group.
package admin

import (
	"fmt"
	"net/http"
	"os/exec"
	"time"

	"github.com/gin-gonic/gin"
)

// Register mounts the admin endpoints on g.
func Register(g *gin.RouterGroup) {
	g.POST("/backup", backup)
}

// backup dumps one database to the backup volume: POST /admin/backup?db=orders
func backup(c *gin.Context) {
	db := c.Query("db")
	target := fmt.Sprintf("/backups/%s-%s.sql.gz", db, time.Now().Format("20060102-150405"))
	cmd := exec.Command("bash", "-c", "pg_dump "+db+" | gzip > "+target)
	if out, err := cmd.CombinedOutput(); err != nil {
		c.String(http.StatusInternalServerError, "backup failed: %v\n%s", err, out)
		return
	}
	c.JSON(http.StatusOK, gin.H{"file": target})
}
