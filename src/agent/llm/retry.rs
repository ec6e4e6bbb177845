//! Retrying a model request: attempts until one succeeds, the error is not worth retrying, or
//! the policy's attempts are spent; before each new attempt a pause ([`delay_before`]: the
//! service's `retry-after` up to a cap, else the policy's exponential backoff), told as a
//! [`StreamUpdate::Retrying`]; the turn's cancellation token ends the pause at once. A rate
//! limit (429, 529, a streamed rate-limit or overload error) also pauses everyone on the same
//! endpoint and key ([`RateGovernor::hold`]), and every attempt first waits out the team's
//! pause (told as a [`StreamUpdate::RateLimited`] when it is not this session's own retry).

use std::time::Duration;

use tokio_util::sync::CancellationToken;

use super::config::RetryPolicy;
use super::conversation::StreamUpdate;
use super::error::LlmError;
use super::governor::RateGovernor;

/// A team pause shorter than this is waited without a word.
const TOLD_PAUSE: Duration = Duration::from_millis(100);

/// Where stream updates go.
pub type Updates<'a> = &'a mut (dyn FnMut(StreamUpdate) + Send);

/// The pause before attempt `next` (2, 3, …) after `error`.
pub fn delay_before(policy: &RetryPolicy, next: u32, error: &LlmError) -> Duration {
    match error.retry_after() {
        Some(wait) => wait.min(policy.max_retry_after),
        None => policy.backoff(next),
    }
}

/// Runs `attempt` until it succeeds or retrying ends, each after the team's rate-limit pause
/// (`governor`). Each attempt is lent `out` for its updates and gives it back with its result.
pub async fn with_retries<'o, T, F, Fut>(
    policy: RetryPolicy,
    governor: &RateGovernor,
    cancel: &CancellationToken,
    mut out: Updates<'o>,
    mut attempt: F,
) -> Result<T, LlmError>
where
    F: FnMut(Updates<'o>) -> Fut,
    Fut: Future<Output = (Updates<'o>, Result<T, LlmError>)>,
{
    let mut number = 1;
    loop {
        let wait = governor.remaining();
        if wait >= TOLD_PAUSE {
            out(StreamUpdate::RateLimited { wait });
        }
        governor.wait(cancel).await?;
        let (back, result) = attempt(out).await;
        out = back;
        let error = match result {
            Ok(done) => return Ok(done),
            // A wait longer than any retry's is a usage limit: the turn ends and says when.
            Err(e) => e.as_usage_limit(policy.max_retry_after, crate::protocol::time::now_ms()),
        };
        let delay = delay_before(&policy, number + 1, &error);
        if error.is_rate_limit() {
            governor.hold(delay);
        }
        if !error.is_retryable() || number >= policy.max_attempts {
            return Err(error);
        }
        number += 1;
        out(StreamUpdate::Retrying {
            attempt: number,
            delay,
            error: error.to_string(),
        });
        tokio::select! {
            biased;
            _ = cancel.cancelled() => return Err(LlmError::Cancelled),
            _ = tokio::time::sleep(delay) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    //! The pauses between attempts, measured on tokio's paused clock.

    use std::cell::RefCell;

    use tokio::time::Instant;

    use super::*;

    fn status(code: u16, retry_after: Option<Duration>) -> LlmError {
        LlmError::Status {
            status: code,
            kind: None,
            message: String::new(),
            retry_after,
        }
    }

    fn policy(max_attempts: u32, base: u64, max: u64, max_retry_after: u64) -> RetryPolicy {
        RetryPolicy {
            max_attempts,
            base_delay: Duration::from_secs(base),
            max_delay: Duration::from_secs(max),
            max_retry_after: Duration::from_secs(max_retry_after),
        }
    }

    /// Runs `with_retries` over `answers` (one per attempt): when each attempt started, the
    /// delays told, and the result.
    async fn run(
        policy: RetryPolicy,
        cancel: &CancellationToken,
        answers: Vec<Result<&'static str, LlmError>>,
    ) -> (Vec<Instant>, Vec<Duration>, Result<&'static str, LlmError>) {
        let answers = RefCell::new(answers.into_iter());
        let started = RefCell::new(Vec::new());
        let mut told = Vec::new();
        let mut out = |u: StreamUpdate| {
            if let StreamUpdate::Retrying { delay, .. } = u {
                told.push(delay);
            }
        };
        let result = with_retries(policy, &RateGovernor::private(), cancel, &mut out, |out| {
            started.borrow_mut().push(Instant::now());
            let answer = answers.borrow_mut().next();
            async move { (out, answer.expect("no more attempts were scripted")) }
        })
        .await;
        (started.into_inner(), told, result)
    }

    fn gaps(started: &[Instant]) -> Vec<Duration> {
        started.windows(2).map(|w| w[1] - w[0]).collect()
    }

    #[tokio::test(start_paused = true)]
    async fn the_backoff_grows_and_is_capped() {
        let answers = (0..6).map(|_| Err(status(529, None))).collect();
        let (started, told, result) =
            run(policy(6, 1, 3, 60), &CancellationToken::new(), answers).await;
        assert!(matches!(result, Err(LlmError::Status { status: 529, .. })));
        let gaps = gaps(&started);
        // Each pause is the one told (tokio's timer counts whole milliseconds).
        assert_eq!(gaps.len(), told.len());
        for (gap, told) in gaps.iter().zip(&told) {
            assert!(
                *gap >= *told && *gap - *told < Duration::from_millis(1),
                "paused {gap:?}, told {told:?}"
            );
        }
        // base · 2^(n-2), capped at 3 s, with up to a quarter taken off.
        let full = [1000, 2000, 3000, 3000, 3000];
        assert_eq!(gaps.len(), full.len());
        for (gap, full) in gaps.iter().zip(full) {
            let full = Duration::from_millis(full);
            assert!(
                *gap <= full && *gap >= full.mul_f64(0.75),
                "pauses {gaps:?}"
            );
        }
    }

    #[tokio::test(start_paused = true)]
    async fn retry_after_is_waited_exactly_up_to_its_cap() {
        let answers = vec![
            Err(status(429, Some(Duration::from_secs(7)))),
            Err(status(429, Some(Duration::from_secs(60)))),
            Ok("done"),
        ];
        let (started, told, result) =
            run(policy(5, 1, 3, 60), &CancellationToken::new(), answers).await;
        assert_eq!(result.expect("the third attempt"), "done");
        let expected = [Duration::from_secs(7), Duration::from_secs(60)];
        assert_eq!(gaps(&started), expected);
        assert_eq!(told, expected);
    }

    /// A `retry-after` past the longest the policy waits is a usage limit: not waited, not
    /// retried; the turn ends at once and says when the limit resets (park and resume).
    #[tokio::test(start_paused = true)]
    async fn a_retry_after_past_the_cap_is_a_usage_limit() {
        let answers = vec![
            Err(status(429, Some(Duration::from_secs(500)))),
            Ok("never"),
        ];
        let before = crate::protocol::time::now_ms();
        let (started, told, result) =
            run(policy(5, 1, 3, 60), &CancellationToken::new(), answers).await;
        let after = crate::protocol::time::now_ms();
        match result {
            Err(LlmError::UsageLimit { until_ms, .. }) => assert!(
                (before + 500_000..=after + 500_000).contains(&until_ms),
                "resets at {until_ms}, asked between {before} and {after} for 500 s"
            ),
            other => panic!("not a usage limit: {other:?}"),
        }
        assert_eq!(started.len(), 1, "retried");
        assert!(told.is_empty(), "a retry was told: {told:?}");
    }

    #[tokio::test(start_paused = true)]
    async fn a_cancel_during_the_pause_ends_it_at_once() {
        let cancel = CancellationToken::new();
        let canceller = cancel.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(200)).await;
            canceller.cancel();
        });
        let begun = Instant::now();
        let answers = vec![Err(status(503, Some(Duration::from_secs(30))))];
        let (started, _, result) = run(policy(5, 1, 3, 60), &cancel, answers).await;
        assert!(matches!(result, Err(LlmError::Cancelled)), "{result:?}");
        assert_eq!(started.len(), 1);
        assert_eq!(begun.elapsed(), Duration::from_millis(200));
    }

    #[tokio::test(start_paused = true)]
    async fn what_is_not_worth_retrying_is_not_waited_for() {
        let begun = Instant::now();
        let answers = vec![Err(status(401, Some(Duration::from_secs(30))))];
        let (started, told, result) =
            run(policy(5, 1, 3, 60), &CancellationToken::new(), answers).await;
        assert!(matches!(result, Err(LlmError::Status { status: 401, .. })));
        assert_eq!((started.len(), told.len()), (1, 0));
        assert_eq!(begun.elapsed(), Duration::ZERO);
    }
}
