package main

import (
	"database/sql"
	"log"
	"net/http"
	"os"

	"github.com/gin-gonic/gin"
	_ "github.com/lib/pq"
)

// Album is one record of the catalogue.
type Album struct {
	ID     int64   `json:"id"`
	Title  string  `json:"title"`
	Artist string  `json:"artist"`
	Price  float64 `json:"price"`
}

type server struct {
	db *sql.DB
}

func (s *server) getAlbum(c *gin.Context) {
	var a Album
	row := s.db.QueryRow("SELECT id, title, artist, price FROM albums WHERE id = $1", c.Param("id"))
	if err := row.Scan(&a.ID, &a.Title, &a.Artist, &a.Price); err != nil {
		if err == sql.ErrNoRows {
			c.JSON(http.StatusNotFound, gin.H{"error": "album not found"})
			return
		}
		c.JSON(http.StatusInternalServerError, gin.H{"error": "database error"})
		return
	}
	c.JSON(http.StatusOK, a)
}

func main() {
	db, err := sql.Open("postgres", os.Getenv("DATABASE_URL"))
	if err != nil {
		log.Fatal(err)
	}
	s := &server{db: db}
	router := gin.Default()
	router.GET("/albums/:id", s.getAlbum)
	log.Fatal(router.Run(":8080"))
}
