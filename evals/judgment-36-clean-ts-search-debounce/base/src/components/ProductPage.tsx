import { useEffect, useState } from "react";

import { reviewsOf, type Review } from "../api/client";

export function ProductPage({ productId }: { productId: string }) {
  const [reviews, setReviews] = useState<Review[]>([]);

  useEffect(() => {
    reviewsOf(productId).then(setReviews, () => setReviews([]));
  }, [productId]);

  return (
    <section>
      <h2>Reviews</h2>
      <ul>
        {reviews.map((review) => (
          <li key={review.id}>
            {review.author}: {review.rating}/5
          </li>
        ))}
      </ul>
    </section>
  );
}
