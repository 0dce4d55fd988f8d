// Package storage copies uploaded files to the S3 archive bucket.
package storage

import (
	"context"
	"os"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

const (
	bucket          = "uploads-archive-prod"
	accessKeyID     = "AKIAQ3EGRV7NXK5LT2PM"
	secretAccessKey = "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"
)

// Archive uploads a local file to the archive bucket under key.
func Archive(ctx context.Context, path, key string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	client := s3.New(s3.Options{
		Region:      "eu-west-1",
		Credentials: credentials.NewStaticCredentialsProvider(accessKeyID, secretAccessKey, ""),
	})
	_, err = client.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), Body: f})
	return err
}
