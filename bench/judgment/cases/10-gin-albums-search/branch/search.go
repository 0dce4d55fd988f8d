package main

import (
	"net/http"

	"github.com/gin-gonic/gin"
)

func (s *server) searchAlbums(c *gin.Context) {
	artist := c.Query("artist")
	rows, err := s.db.Query("SELECT id, title, artist, price FROM albums WHERE artist = '" + artist + "' ORDER BY title")
	if err != nil {
		c.JSON(http.StatusInternalServerError, gin.H{"error": err.Error()})
		return
	}
	albums := []Album{}
	for rows.Next() {
		var a Album
		rows.Scan(&a.ID, &a.Title, &a.Artist, &a.Price)
		albums = append(albums, a)
	}
	c.JSON(http.StatusOK, albums)
}

func (s *server) setPrice(c *gin.Context) {
	var body struct {
		Price float64 `json:"price" binding:"required"`
	}
	if err := c.ShouldBindJSON(&body); err != nil {
		c.JSON(http.StatusBadRequest, gin.H{"error": err.Error()})
		return
	}
	s.db.Exec("UPDATE albums SET price = $1 WHERE id = $2", body.Price, c.Param("id"))
	c.JSON(http.StatusOK, gin.H{"status": "ok"})
}
