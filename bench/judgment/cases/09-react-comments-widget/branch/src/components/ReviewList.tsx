import { useEffect, useState } from "react";

import { markHelpful, reviewsOf, type Review } from "../api/client";

/** The reviews of a product, with the formatting customers typed (bold, links, lists). */
export function ReviewList({ productId }: { productId: string }) {
  const [reviews, setReviews] = useState<Review[]>([]);
  const [selected, setSelected] = useState<string[]>([]);

  useEffect(() => {
    reviewsOf(productId).then(setReviews, () => setReviews([]));
  }, [productId]);

  return (
    <section>
      <h2>Reviews</h2>
      {reviews.map((review) => (
        <article key={review.id} onClick={() => setSelected([...selected, review.id])}>
          <header>
            {review.author}: {review.rating}/5
          </header>
          <div dangerouslySetInnerHTML={{ __html: review.html }} />
        </article>
      ))}
      <button onClick={() => markHelpful(selected).then((n) => alert(`${n} marked helpful`))}>
        Mark helpful
      </button>
    </section>
  );
}
