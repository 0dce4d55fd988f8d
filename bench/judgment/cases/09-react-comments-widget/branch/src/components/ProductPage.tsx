import { ReviewList } from "./ReviewList";

export function ProductPage({ productId }: { productId: string }) {
  return <ReviewList productId={productId} />;
}
