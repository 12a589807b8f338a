//! The run-store suite against the in-memory store.
mod store_common;

store_suite!(store_common::Memory);

mod accessor {
    use std::collections::HashMap;
    use std::sync::{Arc, Mutex};

    use phaseo_agent::store::{AccessorRunStore, ListQuery, RunStore, StateAccessor};
    use phaseo_agent::{async_trait, ContinueOptions, ErrorCode, RunStatus, ToolError};

    use super::store_common::{agent, approve, paused_run, Counter};

    /// The product's accessor: a map from run id to state JSON.
    #[derive(Default)]
    struct MapAccessor(Mutex<HashMap<String, String>>, Mutex<usize>);

    #[async_trait]
    impl StateAccessor for MapAccessor {
        async fn load(&self, run_id: &str) -> Result<Option<String>, ToolError> {
            Ok(self.0.lock().unwrap().get(run_id).cloned())
        }
        async fn save(&self, run_id: &str, state_json: &str) -> Result<(), ToolError> {
            *self.1.lock().unwrap() += 1;
            self.0
                .lock()
                .unwrap()
                .insert(run_id.to_owned(), state_json.to_owned());
            Ok(())
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_load_save_accessor_is_a_store_without_claims() {
        let map = Arc::new(MapAccessor::default());
        let store: Arc<dyn RunStore> = Arc::new(AccessorRunStore::new(map.clone()));
        assert!(!store.supports_claims());
        let counter = Counter::default();
        let mailer = agent(store.clone(), &counter, Default::default());
        let paused = paused_run(&mailer).await;
        assert_eq!(*map.1.lock().unwrap(), 2, "run start and pause");
        assert_eq!(map.0.lock().unwrap()[&paused.run.id], paused.to_json());
        let done = mailer
            .continue_by_id(paused.run.id.clone(), approve())
            .await
            .unwrap();
        assert_eq!(done.status(), RunStatus::Completed);
        assert_eq!(map.0.lock().unwrap()[&paused.run.id], done.to_json());
        // No claim: an old copy of the state continues again (the documented limit).
        let again = mailer.continue_run(&paused, approve()).await.unwrap();
        assert_eq!(again.status(), RunStatus::Completed);
        assert_eq!(counter.runs.load(std::sync::atomic::Ordering::SeqCst), 2);
        // By id, the accessor's latest state is completed.
        let by_id = mailer
            .continue_by_id(paused.run.id.clone(), approve())
            .await
            .unwrap_err();
        assert_eq!(
            by_id.message(),
            format!("Run {} is not waiting for human input", paused.run.id)
        );
        let list = store.list(&ListQuery::waiting()).await.unwrap_err();
        assert_eq!(list.code(), ErrorCode::StoreFailed);
        assert_eq!(
            list.message(),
            "Run store failed: list is not supported by a load/save state accessor"
        );
        let recover = mailer
            .recover(
                &paused.run.id,
                ContinueOptions::new(super::store_common::scripted([])),
            )
            .await
            .unwrap_err();
        assert_eq!(recover.code(), ErrorCode::ContinueInvalid);
    }
}

mod row_json {
    use std::sync::Arc;

    use phaseo_agent::store::{InMemoryRunStore, ListQuery, RunStore};
    use phaseo_agent::Value;

    use super::store_common::{agent, paused_run, Counter};

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn rows_and_pages_are_json_with_the_state_verbatim() {
        let store: Arc<dyn RunStore> = Arc::new(InMemoryRunStore::new());
        let counter = Counter::default();
        let paused = paused_run(&agent(store.clone(), &counter, Default::default())).await;
        let row = store.load(&paused.run.id).await.unwrap().unwrap();
        let text = row.to_json().unwrap();
        assert!(text.ends_with(&format!(",\"state\":{}}}", paused.to_json())));
        let value: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(value["runId"], paused.run.id.as_str());
        assert_eq!(value["status"], "waiting_for_human");
        assert_eq!(value["version"], row.version);
        assert!(value["pauseId"].is_string() && value.get("leaseOwner").is_some());
        let page = store.list(&ListQuery::default()).await.unwrap();
        let page: Value = serde_json::from_str(&page.to_json().unwrap()).unwrap();
        assert_eq!(page["runs"][0], value);
        assert_eq!(page["nextCursor"], Value::Null);

        let mut corrupt = row.clone();
        corrupt.state_json = "{}".into();
        let e = corrupt.to_json().unwrap_err();
        assert_eq!(e.code(), phaseo_agent::ErrorCode::StateInvalid);
        assert!(e.message().contains(&paused.run.id), "{}", e.message());
    }
}

/// The JSON form of a list query (the C ABI's and PHP's) and its refusals.
mod query_json {
    use phaseo_agent::store::ListQuery;
    use phaseo_agent::{ErrorCode, RunStatus};

    #[test]
    fn every_field_is_read() {
        let q = ListQuery::from_json(Some(
            r#"{"statuses":["waiting_for_human","failed"],"agentId":"mailer","limit":5,"cursor":"c1"}"#,
        ))
        .unwrap();
        assert_eq!(
            q.statuses,
            vec![RunStatus::WaitingForHuman, RunStatus::Failed]
        );
        assert_eq!(q.agent_id.as_deref(), Some("mailer"));
        assert_eq!((q.limit, q.cursor.as_deref()), (5, Some("c1")));
        assert_eq!(ListQuery::from_json(None).unwrap(), ListQuery::default());
        assert_eq!(
            ListQuery::from_json(Some("{}")).unwrap(),
            ListQuery::default()
        );
    }

    #[test]
    fn bad_queries_are_refused_naming_the_problem() {
        let e = ListQuery::from_json(Some(r#"{"agent":"x"}"#)).unwrap_err();
        assert_eq!(e.code(), ErrorCode::DefinitionInvalid);
        assert!(e.message().contains("Invalid store query") && e.message().contains("agent"));
        let e = ListQuery::from_json(Some(r#"{"limit":"ten"}"#)).unwrap_err();
        assert_eq!(e.code(), ErrorCode::DefinitionInvalid);
        let e = ListQuery::from_json(Some(r#"{"statuses":["paused"]}"#)).unwrap_err();
        assert_eq!(e.code(), ErrorCode::StoreFailed);
        assert!(e.message().contains("'paused'"));
    }
}
