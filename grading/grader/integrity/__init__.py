"""What the TA should look at beside a grade: tampering, imported twins, answers alike
another's or the course's own code, numbers worked for another id.

    flags        every flag of one submission (grades.csv's ``flags``)
    tamper/      lines that change or get around what the tests rely on
    own_numbers  numbers worked by hand for another id, or through the course's code
    similarity/  alike answers across the class, and alike the course's own code
"""
