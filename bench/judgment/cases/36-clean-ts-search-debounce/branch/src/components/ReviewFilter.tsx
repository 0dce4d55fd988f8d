import { useMemo, useState } from "react";

import type { Review } from "../api/client";
import { useDebounced } from "../hooks/useDebounced";

const FILTER_DELAY_MS = 200;

/** Reviews whose author or text contains the typed words (case-insensitive). */
export function ReviewFilter({ reviews }: { reviews: Review[] }) {
  const [query, setQuery] = useState("");
  const debounced = useDebounced(query, FILTER_DELAY_MS);

  const visible = useMemo(() => {
    const words = debounced.toLowerCase().split(/\s+/).filter(Boolean);
    return reviews.filter((review) => {
      const text = `${review.author} ${review.html}`.toLowerCase();
      return words.every((word) => text.includes(word));
    });
  }, [reviews, debounced]);

  return (
    <div>
      <input
        type="search"
        aria-label="Filter reviews"
        value={query}
        onChange={(event) => setQuery(event.target.value)}
      />
      <ul>
        {visible.map((review) => (
          <li key={review.id}>
            {review.author}: {review.rating}/5
          </li>
        ))}
      </ul>
    </div>
  );
}
