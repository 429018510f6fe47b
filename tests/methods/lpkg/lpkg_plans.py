"""Plans in the authors' planning language, shared by the LPKG tests."""

IN_PLAN = """Sub_Question_1 = "Who visited China?"
Info_1 = Search(query=Sub_Question_1)
Ans_1 = Get_Answer(query=Sub_Question_1, info=Info_1)
Temp_Results1 = During(Answer=Ans_1, Time="2014-11")
Final_Answer = Finish_The_Plan(Answer=Temp_Results1)"""

COMPARE_PLAN = """Sub_Question_1 = "When did Angela Merkel visit China?"
Info_1 = Search(query=Sub_Question_1)
Ans_1 = Get_Answer(query=Sub_Question_1, info=Info_1)
Sub_Question_2 = "When did Vladimir Putin visit China?"
Info_2 = Search(query=Sub_Question_2)
Ans_2 = Get_Answer(query=Sub_Question_2, info=Info_2)
Ans_3 = Compare(Original_Query=Original_Question, Subquestions=[Sub_Question_1, Sub_Question_2],
                Answers=[Ans_1, Ans_2])
Final_Answer = Finish_The_Plan(Answer=Ans_3)"""
