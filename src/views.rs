//! The site's views and the address keys that belong to one view, as types: `?view=NAME` read
//! into a [`View`] once (`View::parse`), each view's name, its label in the nav (if it has one)
//! and its page in one `match` each, so that a new view is a variant here and a file in
//! `pages/`; a link to a view ([`crate::view_href`]) leaves behind the [`ViewKey`]s of the view
//! it leaves.

use crate::pages;
use leptos::prelude::*;

/// A view of the site, as `?view=` names it (the leaderboard when it names none it knows).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum View {
    Leaderboard,
    Breakdown,
    Reliability,
    Judges,
    Grade,
    Failures,
    Questions,
    Runs,
    /// Every model (`?view=models`), and one (`?view=model&model=M`): one page.
    Models,
    Model,
    Review,
    Data,
    /// Reached by a link only: not in the nav.
    Question,
    Compare,
}

impl View {
    /// The views the nav links to, in its order.
    pub const NAV: [View; 11] = [
        View::Leaderboard,
        View::Breakdown,
        View::Reliability,
        View::Judges,
        View::Grade,
        View::Failures,
        View::Questions,
        View::Runs,
        View::Models,
        View::Review,
        View::Data,
    ];

    /// Every view.
    pub const ALL: [View; 14] = [
        View::Leaderboard,
        View::Breakdown,
        View::Reliability,
        View::Judges,
        View::Grade,
        View::Failures,
        View::Questions,
        View::Runs,
        View::Models,
        View::Model,
        View::Review,
        View::Data,
        View::Question,
        View::Compare,
    ];

    /// Its name in the address (`?view=NAME`).
    pub fn name(self) -> &'static str {
        match self {
            View::Leaderboard => "leaderboard",
            View::Breakdown => "breakdown",
            View::Reliability => "reliability",
            View::Judges => "judges",
            View::Grade => "grade",
            View::Failures => "failures",
            View::Questions => "questions",
            View::Runs => "runs",
            View::Models => "models",
            View::Model => "model",
            View::Review => "review",
            View::Data => "data",
            View::Question => "question",
            View::Compare => "compare",
        }
    }

    /// The view `?view=` names; the leaderboard when it names none (or one it does not know).
    pub fn parse(name: Option<&str>) -> View {
        name.and_then(|n| View::ALL.into_iter().find(|v| v.name() == n))
            .unwrap_or(View::Leaderboard)
    }

    /// Its link's words in the nav.
    pub fn label(self) -> &'static str {
        match self {
            View::Leaderboard => "Leaderboard",
            View::Breakdown => "Breakdown",
            View::Reliability => "Reliability",
            View::Judges => "Judges",
            View::Grade => "Grade",
            View::Failures => "Failure modes",
            View::Questions => "Questions",
            View::Runs => "Runs",
            View::Models | View::Model => "Models",
            View::Review => "Review",
            View::Data => "Data",
            View::Question => "Question",
            View::Compare => "Side by side",
        }
    }

    /// Its page.
    pub fn page(self) -> AnyView {
        match self {
            View::Leaderboard => view! { <pages::leaderboard::Leaderboard /> }.into_any(),
            View::Breakdown => view! { <pages::breakdown::Breakdown /> }.into_any(),
            View::Reliability => view! { <pages::reliability::Reliability /> }.into_any(),
            View::Judges => view! { <pages::judges::Judges /> }.into_any(),
            View::Grade => view! { <pages::grade::Grade /> }.into_any(),
            View::Failures => view! { <pages::failures::Failures /> }.into_any(),
            View::Questions => view! { <pages::questions::Questions /> }.into_any(),
            View::Runs => view! { <pages::runs::Runs /> }.into_any(),
            View::Compare => view! { <pages::compare::Compare /> }.into_any(),
            View::Question => view! { <pages::question::QuestionDetail /> }.into_any(),
            View::Models | View::Model => view! { <pages::model::ModelDetail /> }.into_any(),
            View::Data => view! { <pages::data::Data /> }.into_any(),
            View::Review => view! { <pages::review::ReviewView /> }.into_any(),
        }
    }
}

/// An address key that belongs to the view it is in (a question, a pair, a step, a sample):
/// a link to a view leaves them all behind. The keys that hold across views (the options:
/// judge, policy, weights, dropped questions, files) are none of these.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ViewKey {
    Id,
    Model,
    Att,
    A,
    B,
    Item,
    Axis,
    Category,
    Theme,
    Language,
    Repo,
    Q,
    Sort,
    Step,
    Kind,
    Show,
    Adjudicate,
    N,
    Seed,
    Keys,
    Answer,
}

impl ViewKey {
    pub const ALL: [ViewKey; 21] = [
        ViewKey::Id,
        ViewKey::Model,
        ViewKey::Att,
        ViewKey::A,
        ViewKey::B,
        ViewKey::Item,
        ViewKey::Axis,
        ViewKey::Category,
        ViewKey::Theme,
        ViewKey::Language,
        ViewKey::Repo,
        ViewKey::Q,
        ViewKey::Sort,
        ViewKey::Step,
        ViewKey::Kind,
        ViewKey::Show,
        ViewKey::Adjudicate,
        ViewKey::N,
        ViewKey::Seed,
        ViewKey::Keys,
        ViewKey::Answer,
    ];

    /// Its name in the address.
    pub fn name(self) -> &'static str {
        match self {
            ViewKey::Id => "id",
            ViewKey::Model => "model",
            ViewKey::Att => "att",
            ViewKey::A => "a",
            ViewKey::B => "b",
            ViewKey::Item => "item",
            ViewKey::Axis => "axis",
            ViewKey::Category => "category",
            ViewKey::Theme => "theme",
            ViewKey::Language => "language",
            ViewKey::Repo => "repo",
            ViewKey::Q => "q",
            ViewKey::Sort => "sort",
            ViewKey::Step => "step",
            ViewKey::Kind => "kind",
            ViewKey::Show => "show",
            ViewKey::Adjudicate => "adjudicate",
            ViewKey::N => "n",
            ViewKey::Seed => "seed",
            ViewKey::Keys => "keys",
            ViewKey::Answer => "answer",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_view_reads_back_from_its_name_and_an_unknown_one_is_the_leaderboard() {
        for v in View::ALL {
            assert_eq!(View::parse(Some(v.name())), v);
        }
        assert_eq!(View::parse(None), View::Leaderboard);
        assert_eq!(View::parse(Some("nonsense")), View::Leaderboard);
        assert!(View::NAV.iter().all(|v| View::ALL.contains(v)));
        let mut names: Vec<&str> = ViewKey::ALL.iter().map(|k| k.name()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), ViewKey::ALL.len(), "no key twice");
    }
}
