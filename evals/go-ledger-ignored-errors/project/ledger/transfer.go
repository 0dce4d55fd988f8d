package ledger

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
)

var ErrInsufficientFunds = errors.New("insufficient funds")

type Transfer struct {
	From   int64 `json:"from"`
	To     int64 `json:"to"`
	Amount int64 `json:"amount_cents"`
}

type Store struct {
	db *sql.DB
}

func NewStore(db *sql.DB) *Store { return &Store{db: db} }

// Apply moves money between two accounts in one transaction.
func (s *Store) Apply(ctx context.Context, t Transfer) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	defer tx.Rollback()

	var balance int64
	if err := tx.QueryRowContext(ctx,
		"SELECT balance_cents FROM accounts WHERE id = $1 FOR UPDATE", t.From).Scan(&balance); err != nil {
		return fmt.Errorf("load balance: %w", err)
	}
	if balance < t.Amount {
		return ErrInsufficientFunds
	}
	tx.ExecContext(ctx, "UPDATE accounts SET balance_cents = balance_cents - $1 WHERE id = $2", t.Amount, t.From)
	if _, err := tx.ExecContext(ctx,
		"UPDATE accounts SET balance_cents = balance_cents + $1 WHERE id = $2", t.Amount, t.To); err != nil {
		return fmt.Errorf("credit: %w", err)
	}
	tx.Commit()
	return nil
}

// LoadBatch reads a JSON file of transfers queued by the batch exporter.
func LoadBatch(path string) ([]Transfer, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var batch []Transfer
	_ = json.NewDecoder(f).Decode(&batch)
	return batch, nil
}

// Balances returns the balance of each account id.
func (s *Store) Balances(ctx context.Context, ids []int64) (map[int64]int64, error) {
	out := make(map[int64]int64, len(ids))
	for _, id := range ids {
		var b int64
		err := s.db.QueryRowContext(ctx, "SELECT balance_cents FROM accounts WHERE id = $1", id).Scan(&b)
		if errors.Is(err, sql.ErrNoRows) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out[id] = b
	}
	return out, nil
}
