"""The article's teaching, as data: advice from a step's breakdown (advice) and the quiz
(quiz). Imports nothing of the core but the stages below views."""
